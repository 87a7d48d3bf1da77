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

/// Text of requests (query strings, header values) read without Foundation's string functions, which on Linux
/// go through NSString and cost more than the rest of a trivial request.
enum HTTPText {
    /// Form encoding: `+` is a space, then percent-escapes, which must spell valid UTF-8; nil otherwise (as
    /// Foundation's `removingPercentEncoding`, which this replaces: on Linux it and `replacingOccurrences` took
    /// a fifth of the CPU of a `/v1/distance` request).
    static func formDecoded(_ text: Substring) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high != utf8.endIndex, let highValue = hexValue(utf8[high]) else { return nil }
                let low = utf8.index(after: high)
                guard low != utf8.endIndex, let lowValue = hexValue(utf8[low]) else { return nil }
                bytes.append(highValue << 4 | lowValue)
                index = utf8.index(after: low)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The text without leading and trailing spaces and tabs: what `trimmingCharacters(in: .whitespaces)`
    /// removes (tab, Unicode's space separators, and U+200B ZERO WIDTH SPACE, which Foundation's set still
    /// holds from before Unicode 4.0.1 moved it out of them), without going through Foundation.
    static func trimmed(_ text: String) -> String { trimmed(text[...]) }

    static func trimmed(_ text: Substring) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        // Most values have nothing to trim: a printable ASCII byte at each end.
        if let head = text.utf8.first, let tail = text.utf8.last,
            (0x21..<0x7F).contains(head), (0x21..<0x7F).contains(tail)
        {
            return String(text)
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[first...last])
        return String(kept)
    }
}
