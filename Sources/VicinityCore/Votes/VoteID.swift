/// A vote's identifier, made to be read aloud in a room and typed on a phone: six characters from an
/// alphabet without look-alikes (no 0/O, 1/I/L, nor U, which reads as V), random, so that one id says
/// nothing about any other.
///
/// 30 symbols over 6 places give 729 million ids: a new vote meets a taken id once in 72,900 tries with
/// 10,000 votes stored (and then draws again), and a guessed id finds a vote as rarely. Letters are read in
/// either case; ids are written in upper case.
public struct VoteID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    public static let length = 6

    /// Nil for text that is not a vote id in either case.
    public init?(_ text: String) {
        guard text.utf8.count == Self.length else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.length)
        for byte in text.utf8 {
            // ASCII lower case to upper case; anything else must already be a symbol of the alphabet.
            let upper = (97...122).contains(byte) ? byte - 32 : byte
            guard upper < 128, Self.isSymbol[Int(upper)] else { return nil }
            bytes.append(upper)
        }
        rawValue = String(decoding: bytes, as: UTF8.self)
    }

    /// Ids that read as a word of the HTTP paths (`/v1/votes/nearby`) are never given out.
    public static let reserved: Set<String> = ["NEARBY"]

    public static func random() -> VoteID {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] }
            let text = String(decoding: bytes, as: UTF8.self)
            if !reserved.contains(text) { return VoteID(unchecked: text) }
        }
    }

    private init(unchecked: String) { rawValue = unchecked }

    private static let isSymbol: [Bool] = (0..<128).map { alphabet.contains(UInt8($0)) }

    public static func < (lhs: VoteID, rhs: VoteID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
}

public enum BallotKind {}
/// A ballot's identifier: what the initiator names when voiding or restoring one.
public typealias BallotID = RandomIdentifier<BallotKind>
