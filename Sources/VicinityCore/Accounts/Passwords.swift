/// Turns passwords into slow salted hashes and checks them. Throws `PasswordHashingUnavailable` when it
/// cannot hash at all, which is no answer about the password.
public protocol PasswordHasher: Sendable {
    func hash(_ password: Password) async throws -> PasswordHash
    func verify(_ password: String, against hash: PasswordHash) async throws -> Bool
}

/// The hasher cannot run now (its threads are stopped): try again later.
public struct PasswordHashingUnavailable: Error, Hashable, Sendable {
    public init() {}
}
