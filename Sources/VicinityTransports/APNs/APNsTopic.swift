/// What a notification is for (`apns-topic`): the app's bundle ID (`com.example.app`), with a suffix for some
/// kinds of push (`.voip`, `.complication`, `.push-type.liveactivity`).
public struct APNsTopic: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Apple, "CFBundleIdentifier": a bundle ID is letters, digits, hyphens and periods. 255 characters bound it
    /// well past any Apple takes.
    public static let maximumLength = 255

    public init(_ text: String) throws(APNsProblem) {
        guard !text.isEmpty, text.utf8.count <= Self.maximumLength, text.utf8.allSatisfy(Self.isBundleIDCharacter) else {
            throw APNsProblem("an APNs topic is the app's bundle ID (com.example.app): 1 to \(Self.maximumLength) characters of A-Z, a-z, 0-9, . and -")
        }
        rawValue = text
    }

    public var description: String { rawValue }

    static func isBundleIDCharacter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }
}
