import GeoCore

/// A place's identifier: what data staff chose (`csulb-hsci`, `geonames-3038832`, `way/123`).
public struct PlaceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Identifiers are 1 to 128 characters without control characters or surrounding spaces, so that they
    /// survive URLs, CSV and log lines unchanged.
    public static let maximumLength = 128

    public init(_ rawValue: String) throws(ValidationError) {
        guard !rawValue.isEmpty else { throw ValidationError(field: "id", message: "must not be empty") }
        guard rawValue.count <= Self.maximumLength else {
            throw ValidationError(field: "id", message: "must be at most \(Self.maximumLength) characters")
        }
        guard rawValue.trimmingSpaces == rawValue,
            !rawValue.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else {
            throw ValidationError(field: "id", message: "must not contain control characters or surrounding spaces")
        }
        self.rawValue = rawValue
    }

    public static func < (lhs: PlaceID, rhs: PlaceID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
}

/// What kind of place this is (`academic`, `buddhist_temple`, `shrine`): lower-case words joined by `_`.
public struct Category: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let maximumLength = 64

    /// Accepts free text and normalises it: "Main Campus" becomes `main_campus`.
    public init(_ text: String) throws(ValidationError) {
        var words: [String] = []
        var current = ""
        for character in text.lowercased() {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        let normalised = words.joined(separator: "_")
        guard !normalised.isEmpty else {
            throw ValidationError(field: "category", message: "must contain a letter or digit")
        }
        guard normalised.count <= Self.maximumLength else {
            throw ValidationError(field: "category", message: "must be at most \(Self.maximumLength) characters")
        }
        self.rawValue = normalised
    }

    public static func < (lhs: Category, rhs: Category) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }

    /// The one reader of category lists, wherever they come from (query parameters, command-line options,
    /// settings): each value may hold several categories separated by commas; blank entries are skipped.
    /// Returns the categories and a problem for each entry that is not one, naming `field`.
    public static func list(_ values: some Sequence<String>, field: String) -> (categories: Set<Category>, errors: [ValidationError]) {
        var categories: Set<Category> = []
        var errors: [ValidationError] = []
        for value in values {
            for word in value.split(separator: ",") where !word.allSatisfy(\.isWhitespace) {
                do {
                    categories.insert(try Category(String(word)))
                } catch {
                    errors.append(ValidationError(field: field, message: "\"\(word.prefix(64))\" \(error.message)"))
                }
            }
        }
        return (categories, errors)
    }
}

/// Something on the map that people ask about: a building, a temple, a populated place.
public struct Place: Hashable, Sendable {
    public var id: PlaceID
    public var name: String
    public var category: Category
    /// Other names the place is searched by (building codes, local-script names).
    public var aliases: [String]
    /// Every further column or property of the source, kept as text.
    public var attributes: [String: String]
    /// Where proximity is measured from: the point itself, or a point inside the footprint.
    public var coordinate: Coordinate
    /// The outline, when the source has one.
    public var footprint: MultiPolygon?

    public static let maximumNameLength = 200

    public init(
        id: PlaceID,
        name: String,
        category: Category,
        aliases: [String] = [],
        attributes: [String: String] = [:],
        coordinate: Coordinate,
        footprint: MultiPolygon? = nil
    ) throws(ValidationError) {
        let trimmed = name.trimmingSpaces
        guard !trimmed.isEmpty else { throw ValidationError(field: "name", message: "must not be empty") }
        guard trimmed.count <= Self.maximumNameLength else {
            throw ValidationError(field: "name", message: "must be at most \(Self.maximumNameLength) characters")
        }
        try Self.refuseNUL(in: trimmed, field: "name")
        for alias in aliases { try Self.refuseNUL(in: alias, field: "aliases") }
        for (key, value) in attributes {
            try Self.refuseNUL(in: key, field: "attributes")
            try Self.refuseNUL(in: value, field: "attributes")
        }
        self.id = id
        self.name = trimmed
        self.category = category
        self.aliases = aliases.map(\.trimmingSpaces).filter { !$0.isEmpty && $0 != trimmed }.uniqued()
        self.attributes = attributes
        self.coordinate = coordinate
        self.footprint = footprint
    }

    /// No text of a place may hold U+0000: it is no character of any name, and PostgreSQL's text cannot hold
    /// it, so a place that one store kept and another refused would make the stores disagree.
    static func refuseNUL(in text: String, field: String) throws(ValidationError) {
        if text.utf8.contains(0) { throw ValidationError(field: field, message: "must not contain the NUL character (U+0000)") }
    }
}

/// A named area, such as a university campus, that positions are tested against.
public struct Campus: Hashable, Sendable {
    public var id: PlaceID
    public var name: String
    public var boundary: MultiPolygon

    public init(id: PlaceID, name: String, boundary: MultiPolygon) throws(ValidationError) {
        let trimmed = name.trimmingSpaces
        guard !trimmed.isEmpty else { throw ValidationError(field: "name", message: "must not be empty") }
        try Place.refuseNUL(in: trimmed, field: "name")
        self.id = id
        self.name = trimmed
        self.boundary = boundary
    }
}

/// Input that breaks a rule of the domain, named by the field it is about.
public struct ValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    public let field: String
    public let message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}

extension String {
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}

extension Sequence where Element: Hashable {
    /// The elements without repeats, in first-seen order.
    public func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
