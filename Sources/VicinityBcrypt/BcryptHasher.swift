import Foundation
import HummingbirdBcrypt
import NIOPosix
import VicinityCore

/// bcrypt's work factor: each step doubles the time a guess costs.
public struct BcryptCost: Hashable, Sendable, CustomStringConvertible {
    public let value: UInt8

    /// OWASP's Password Storage Cheat Sheet asks for at least 10.
    public static let minimum: UInt8 = 10
    /// Measured on this project's 2-core machine (Scripts/bench/friends.sh, README): at cost 10 two cores
    /// sign in about 40 people a second, so a classroom of 50 signs in within two seconds; 12 would take four
    /// times as long, and a burst of sign-ins would hold the cores for that much longer.
    public static let standard = BcryptCost(uncheckedValue: 10)

    public init(_ value: Int) throws(ValidationError) {
        guard (Int(Self.minimum)...31).contains(value) else {
            throw ValidationError(field: "bcrypt-cost", message: "must be an integer in [\(Self.minimum), 31]")
        }
        self.value = UInt8(value)
    }

    /// For tests only, where the hashing rules are under test rather than the hash's strength: bcrypt's own
    /// minimum of 4 makes a hash take a millisecond.
    public static func forTesting(_ value: UInt8) -> BcryptCost {
        precondition((4...31).contains(value), "bcrypt accepts costs 4 to 31")
        return BcryptCost(uncheckedValue: value)
    }

    private init(uncheckedValue: UInt8) { value = uncheckedValue }

    public var description: String { String(value) }
}

/// bcrypt from hummingbird-auth, run on threads of its own, one per core, so that hashing never blocks the
/// threads that serve requests and a burst of sign-ins queues rather than starving everything else.
///
/// The threads are started with the hasher and wait on a condition variable, so hashing needs no file
/// descriptor. libdispatch, which an `OperationQueue` runs on, opens descriptors the first time it is used and
/// traps (SIGILL) when none is left: a first sign-up while clients held every descriptor killed the process.
public final class BcryptHasher: PasswordHasher {
    public let cost: BcryptCost
    private let threads: NIOThreadPool

    public init(cost: BcryptCost = .standard) {
        self.cost = cost
        threads = NIOThreadPool(numberOfThreads: max(1, ProcessInfo.processInfo.activeProcessorCount))
        threads.start()
    }

    deinit { threads.shutdownGracefully { _ in } }

    public func hash(_ password: Password) async throws -> PasswordHash {
        let cost = cost.value
        return try await run { PasswordHash(encoded: Bcrypt.hash(password.normalized, cost: cost)) }
    }

    /// Text that bcrypt would cut or misread (over 72 bytes, NUL) never matches, without being hashed. The
    /// minimum length is not checked here: a rule for new passwords must not lock out older ones.
    public func verify(_ password: String, against hash: PasswordHash) async throws -> Bool {
        let normalized = password.precomposedStringWithCanonicalMapping
        guard normalized.utf8.count <= Password.maximumBytes, !normalized.utf8.contains(0) else { return false }
        return try await run { Bcrypt.verify(normalized, hash: hash.encoded) }
    }

    private func run<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async throws -> Result {
        do { return try await threads.runIfActive(work) } catch is CancellationError { throw CancellationError() } catch {
            throw PasswordHashingUnavailable()
        }
    }
}
