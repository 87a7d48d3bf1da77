import Foundation

/// Name search rules shared by every store: a case- and diacritic-insensitive substring of the name or an
/// alias; exact matches first, then prefixes, then the rest, each group by name then id.
public enum NameMatch {
    /// What ranking needs of a place: its id, its name and the folded forms of its name and aliases. Stores
    /// rank these and load whole places only for the few they return.
    public struct Candidate: Sendable {
        public var id: PlaceID
        public var name: String
        public var foldedNames: [String]

        public init(id: PlaceID, name: String, foldedNames: [String]) {
            self.id = id
            self.name = name
            self.foldedNames = foldedNames
        }

        public init(_ place: Place) {
            self.init(id: place.id, name: place.name, foldedNames: NameMatch.foldedNames(of: place))
        }
    }

    /// The version of `folded`'s rule, raised whenever the rule changes, so that stores keeping folded text
    /// know to recompute it. 1: lower case, accents removed. 2: also every run of white space one space.
    public static let ruleVersion = 2

    /// The folded form stores compare: lower case, accents removed, every run of white space (line breaks
    /// included) one space, none at the ends. Canonical decomposition first, so that "é" becomes "e" plus a
    /// combining accent that is then dropped; ASCII text skips that work. A folded name never holds a line
    /// break, so stores may keep a place's folded names one per line.
    public static func folded(_ text: String) -> String {
        let lowered = text.utf8.allSatisfy({ $0 < 0x80 }) ? text.lowercased() : fold(decomposed(text))
        guard mayNeedSpacing(lowered) else { return lowered }
        return lowered.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// False only when the text certainly has no white space to normalise: single spaces between words are
    /// already right. Non-ASCII white space (U+0085, U+00A0, U+1680, U+2000–U+205F, U+3000) is caught by its
    /// UTF-8 lead byte, so the check may say yes needlessly, never no wrongly.
    private static func mayNeedSpacing(_ text: String) -> Bool {
        var previous: UInt8 = 0x20  // a leading space counts as a run
        for byte in text.utf8 {
            switch byte {
            case 0x20 where previous == 0x20: return true
            case 0x09...0x0D, 0xC2, 0xE1, 0xE2, 0xE3: return true
            default: previous = byte
            }
        }
        return previous == 0x20 && !text.isEmpty
    }

    /// The name and then the aliases of a place, folded.
    public static func foldedNames(of place: Place) -> [String] {
        ([place.name] + place.aliases).map(folded)
    }

    static func fold(_ text: String) -> String {
        String(String.UnicodeScalarView(text.lowercased().unicodeScalars.filter {
            $0.properties.generalCategory != .nonspacingMark
        }))
    }

    /// 0 for an exact match, 1 for a prefix, 2 for a substring, nil for no match.
    public static func rank(foldedNames: [String], folded needle: String) -> Int? {
        foldedNames.compactMap { candidate -> Int? in
            if candidate == needle { return 0 }
            if candidate.hasPrefix(needle) { return 1 }
            return candidate.contains(needle) ? 2 : nil
        }.min()
    }

    /// The ids of the best `limit` candidates for the search text, best first; none for text that folds to
    /// nothing (only spaces), which would otherwise match everything. Category filtering is the caller's:
    /// stores apply it where their index can.
    public static func best(_ candidates: some Sequence<Candidate>, matching text: String, limit: ResultLimit) -> [PlaceID] {
        let needle = folded(text)
        guard !needle.isEmpty else { return [] }
        return candidates
            .compactMap { candidate in rank(foldedNames: candidate.foldedNames, folded: needle).map { (rank: $0, candidate: candidate) } }
            .sorted { a, b in
                if a.rank != b.rank { return a.rank < b.rank }
                if a.candidate.name != b.candidate.name { return a.candidate.name < b.candidate.name }
                return a.candidate.id < b.candidate.id
            }
            .prefix(limit.value)
            .map(\.candidate.id)
    }

    /// Canonical decomposition so that "é" becomes "e" + a combining accent that `fold` drops.
    static func decomposed(_ text: String) -> String { text.decomposedStringWithCanonicalMapping }
}
