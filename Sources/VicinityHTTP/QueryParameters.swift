import Foundation
import GeoCore
import VicinityCore

/// A request's query string, read parameter by parameter with the service's input rules.
///
/// Every reader records what is wrong instead of throwing, so that `finish()` can report every bad field of the
/// request at once; a reader returns nil (or its default) for a bad value. Parameters no reader asked for are
/// refused as well: a misspelt `radius` would otherwise silently fall back to the default.
struct QueryParameters {
    private var values: [String: [String]] = [:]
    /// Parameter names in the order they first appear, so that errors about unknown names come out stably.
    private var names: [String] = []
    private var consumed: Set<String> = []
    /// Names whose value could not be decoded; already reported, so not "required" as well.
    private var undecodable: Set<String> = []
    private(set) var errors: [ValidationError] = []

    init(_ query: String?) {
        guard let query, !query.isEmpty else { return }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = HTTPText.formDecoded(parts[0]) else {
                errors.append(ValidationError(field: "query", message: "a parameter name is not valid percent-encoded UTF-8"))
                continue
            }
            guard let value = HTTPText.formDecoded(parts.count > 1 ? parts[1] : "") else {
                errors.append(ValidationError(field: name, message: "is not valid percent-encoded UTF-8"))
                consumed.insert(name)
                undecodable.insert(name)
                continue
            }
            if values[name] == nil { names.append(name) }
            values[name, default: []].append(value)
        }
    }

    // MARK: Single values

    /// The parameter's value, nil when absent or empty. A parameter given twice is an error: which one was
    /// meant is a guess this service does not make.
    mutating func single(_ name: String) -> String? {
        consumed.insert(name)
        guard let given = values[name] else { return nil }
        guard given.count == 1 else {
            errors.append(ValidationError(field: name, message: "must be given at most once"))
            return nil
        }
        let value = HTTPText.trimmed(given[0])
        return value.isEmpty ? nil : value
    }

    /// Like `single`, and absent or empty is an error. A repeated or undecodable parameter is already
    /// reported as such.
    mutating func required(_ name: String) -> String? {
        let givenOnce = values[name]?.count == 1
        let missing = values[name] == nil && !undecodable.contains(name)
        guard let value = single(name) else {
            if givenOnce || missing { errors.append(ValidationError(field: name, message: "is required")) }
            return nil
        }
        return value
    }

    /// A plain decimal number. `Double(_:)` alone would also take `nan`, `inf` and hexadecimal floats, none of
    /// which a client means as degrees or metres.
    static func decimal(_ text: String) -> Double? {
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard text.utf8.allSatisfy({ byte in
                digits.contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
            }),
            text.utf8.contains(where: { digits.contains($0) })
        else { return nil }
        return Double(text)
    }

    // MARK: Domain values

    /// `lat` and `lon`, each checked on its own so that both are reported when both are wrong.
    mutating func coordinate(latitude latitudeName: String = "lat", longitude longitudeName: String = "lon") -> Coordinate? {
        let latitude = degrees(required(latitudeName), field: latitudeName, axis: .latitude)
        let longitude = degrees(required(longitudeName), field: longitudeName, axis: .longitude)
        guard let latitude, let longitude else { return nil }
        return try? Coordinate(latitude: latitude, longitude: longitude)
    }

    /// `lat` and `lon` when a position may be given or left out: both or neither.
    mutating func optionalCoordinate() -> Coordinate? {
        let hasLatitude = values["lat"] != nil, hasLongitude = values["lon"] != nil
        guard hasLatitude || hasLongitude else {
            consumed.formUnion(["lat", "lon"])
            return nil
        }
        return coordinate()
    }

    /// A position written `LAT,LON` in one parameter, as `from` and `to` are.
    mutating func point(_ name: String) -> Coordinate? {
        guard let text = required(name) else { return nil }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { HTTPText.trimmed($0) }
        guard parts.count == 2 else {
            errors.append(ValidationError(field: name, message: "must be LAT,LON in decimal degrees"))
            return nil
        }
        let latitude = degrees(parts[0], field: name, axis: .latitude)
        let longitude = degrees(parts[1], field: name, axis: .longitude)
        guard let latitude, let longitude else { return nil }
        return try? Coordinate(latitude: latitude, longitude: longitude)
    }

    enum Axis { case latitude, longitude }

    /// Parses degrees and checks them with `Coordinate`'s own rule, so that the range lives in one place.
    private mutating func degrees(_ text: String?, field: String, axis: Axis) -> Double? {
        guard let text else { return nil }
        guard let value = Self.decimal(text) else {
            errors.append(ValidationError(field: field, message: "must be a decimal number of degrees"))
            return nil
        }
        do {
            switch axis {
            case .latitude: _ = try Coordinate(latitude: value, longitude: 0)
            case .longitude: _ = try Coordinate(latitude: 0, longitude: value)
            }
            return value
        } catch {
            errors.append(ValidationError(field: field, message: error.description))
            return nil
        }
    }

    mutating func radius(_ name: String = "radius") -> SearchRadius {
        guard let text = single(name) else { return .standard }
        do {
            return try SearchRadius(meters: Self.decimal(text) ?? .nan)
        } catch {
            errors.append(ValidationError(field: name, message: error.message))
            return .standard
        }
    }

    mutating func limit(_ name: String = "limit") -> ResultLimit {
        guard let text = single(name) else { return .standard }
        do {
            // A value that is not an integer is as wrong as one out of range; 0 gets the domain's message.
            return try ResultLimit(Int(text) ?? 0)
        } catch {
            errors.append(ValidationError(field: name, message: error.message))
            return .standard
        }
    }

    /// Where the previous page ended, from its `next` link; nil for the first page.
    mutating func cursor(_ name: String = "cursor") -> NearbyCursor? {
        guard let text = single(name) else { return nil }
        do {
            return try NearbyCursor(token: text)
        } catch {
            errors.append(ValidationError(field: name, message: error.message))
            return nil
        }
    }

    /// Categories, given as repeated parameters, comma-separated, or both. None means every category.
    mutating func categories(_ name: String = "category") -> Set<VicinityCore.Category> {
        consumed.insert(name)
        let list = VicinityCore.Category.list(values[name] ?? [], field: name)
        errors += list.errors
        return list.categories
    }

    /// Free text such as a search term: required and at most `maximumLength` characters, counted as Unicode
    /// code points as JSON Schema's `maxLength` counts them (so that combining marks cannot stretch a limit
    /// that the OpenAPI document states).
    mutating func text(_ name: String, maximumLength: Int) -> String? {
        guard let value = required(name) else { return nil }
        guard value.unicodeScalars.count <= maximumLength else {
            errors.append(ValidationError(field: name, message: "must be at most \(maximumLength) characters"))
            return nil
        }
        return value
    }

    /// One of a fixed set of words.
    mutating func choice<Choice: RawRepresentable & CaseIterable>(_ name: String, default fallback: Choice) -> Choice
    where Choice.RawValue == String {
        guard let text = single(name) else { return fallback }
        guard let choice = Choice(rawValue: text) else {
            let allowed = Choice.allCases.map(\.rawValue).joined(separator: ", ")
            errors.append(ValidationError(field: name, message: "must be one of \(allowed)"))
            return fallback
        }
        return choice
    }

    /// A comma-separated selection from a fixed list of words (given once), nil when absent. Empty, or a word
    /// not in the list, is an error that names the list.
    mutating func selection<Choice: RawRepresentable & Equatable>(_ name: String, among allowed: [Choice]) -> [Choice]?
    where Choice.RawValue == String {
        guard let text = single(name) else {
            // Given once but empty; absent is the default, and given twice is already reported.
            if values[name]?.count == 1 { errors.append(ValidationError(field: name, message: "names at least one member")) }
            return nil
        }
        var chosen: [Choice] = []
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = HTTPText.trimmed(word)
            guard let choice = allowed.first(where: { $0.rawValue == trimmed }) else {
                let list = allowed.map(\.rawValue).joined(separator: ", ")
                errors.append(ValidationError(field: name, message: "\"\(trimmed.prefix(64))\" is not one of \(list)"))
                return nil
            }
            if !chosen.contains(choice) { chosen.append(choice) }
        }
        return chosen
    }

    // MARK: Outcome

    /// Throws every problem found, including parameters the endpoint does not take.
    func finish() throws(APIError) {
        let unknown = names.filter { !consumed.contains($0) }.map {
            ValidationError(field: String($0.prefix(64)), message: "is not a parameter of this endpoint")
        }
        let all = errors + unknown
        if !all.isEmpty { throw .invalidInput(all) }
    }

    /// A value a reader returned after `finish()` passed; nil there means a reader broke its promise.
    func checked<Value>(_ value: Value?) throws(APIError) -> Value {
        guard let value else { throw .invalidInput(errors) }
        return value
    }
}
