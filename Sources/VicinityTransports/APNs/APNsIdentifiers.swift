/// The identifier of the APNs signing key (`kid` of the provider token): shown beside the key in Apple's
/// developer account (Certificates, Identifiers & Profiles › Keys).
public struct APNsKeyID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ text: String) throws(APNsProblem) {
        guard AppleIdentifier.isValid(text) else {
            throw APNsProblem("an APNs key ID is \(AppleIdentifier.length) characters of A-Z and 0-9, as Apple's developer account shows it beside the key")
        }
        rawValue = text
    }

    public var description: String { rawValue }
}

/// The team the key belongs to (`iss` of the provider token): shown under Membership in Apple's developer
/// account.
public struct APNsTeamID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ text: String) throws(APNsProblem) {
        guard AppleIdentifier.isValid(text) else {
            throw APNsProblem("an Apple team ID is \(AppleIdentifier.length) characters of A-Z and 0-9, as Apple's developer account shows it under Membership")
        }
        rawValue = text
    }

    public var description: String { rawValue }
}

/// Apple's key and team identifiers: Apple, "Establishing a token-based connection to APNs", calls each a
/// 10-character identifier; both are upper-case letters and digits.
enum AppleIdentifier {
    static let length = 10

    static func isValid(_ text: String) -> Bool {
        text.utf8.count == length
            && text.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
