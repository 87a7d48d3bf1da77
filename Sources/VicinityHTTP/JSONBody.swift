import Foundation
import GeoCore
import Hummingbird
import VicinityCore

/// A request's JSON body, read member by member with the service's input rules: the body counterpart of
/// `QueryParameters`.
///
/// The content type must be JSON (else 415) and the body at most `HTTPOptions.maximumBodyBytes` (else 413).
/// Every reader records what is wrong instead of throwing, so that `finish()` reports every bad field at once:
/// missing, mistyped, out of range, and members no reader asked for (a misspelt `privacy_mode` would otherwise
/// change nothing without a word).
struct JSONBody {
    private var members: [String: JSONValue]
    private var consumed: Set<String> = []
    private(set) var errors: [ValidationError] = []

    /// Reads and parses the body. Throws at once for what no field can be blamed for: the wrong content type,
    /// too many bytes, text that is not JSON, or JSON that is not an object.
    static func read(_ request: Request, limit: Int) async throws -> JSONBody {
        guard let type = request.headers[.contentType], isJSON(type) else {
            throw APIError.unsupportedMediaType(given: request.headers[.contentType])
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw APIError.bodyTooLarge(limit: limit)
        }
        guard buffer.readableBytes > 0 else {
            throw APIError.invalidInput([ValidationError(field: "body", message: "is required: a JSON object")])
        }
        let value: JSONValue
        do {
            value = try JSONValue(jsonBytes: buffer.readableBytesView)
        } catch {
            throw APIError.invalidInput([ValidationError(field: "body", message: "is not valid JSON (\(error))")])
        }
        guard case .object(let members) = value else {
            throw APIError.invalidInput([ValidationError(field: "body", message: "must be a JSON object")])
        }
        return JSONBody(members: members)
    }

    init(members: [String: JSONValue]) { self.members = members }

    /// `application/json`, with or without parameters such as `charset=utf-8`, in any case.
    static func isJSON(_ contentType: String) -> Bool {
        let type = contentType.split(separator: ";", maxSplits: 1).first.map { HTTPText.trimmed($0).lowercased() }
        return type == "application/json"
    }

    // MARK: Members

    /// What a member given as JSON null means.
    enum Null {
        /// The same as leaving the member out: "no status", "no e-mail" when creating something.
        case absent
        /// A mistake: in a change, null would otherwise read as "leave it" where the client meant something.
        case refused
    }

    /// The member's value, recording "is required" when it is absent (or null, which is no value).
    private mutating func value(_ name: String, required: Bool, null: Null, expected: String) -> JSONValue? {
        consumed.insert(name)
        switch members[name] {
        case nil:
            if required { errors.append(ValidationError(field: name, message: "is required")) }
            return nil
        case .null?:
            if required {
                errors.append(ValidationError(field: name, message: "is required"))
            } else if null == .refused {
                errors.append(ValidationError(field: name, message: "must be \(expected), not null"))
            }
            return nil
        case let value?:
            return value
        }
    }

    mutating func string(_ name: String, required: Bool = true, null: Null = .absent) -> String? {
        guard let value = value(name, required: required, null: null, expected: "a string") else { return nil }
        guard case .string(let text) = value else { return mistyped(name, "a string") }
        return text
    }

    mutating func bool(_ name: String, required: Bool = true, null: Null = .absent) -> Bool? {
        guard let value = value(name, required: required, null: null, expected: "true or false") else { return nil }
        guard case .bool(let flag) = value else { return mistyped(name, "true or false") }
        return flag
    }

    mutating func number(_ name: String, required: Bool = true, null: Null = .absent) -> Double? {
        guard let value = value(name, required: required, null: null, expected: "a number") else { return nil }
        guard case .number(let number) = value else { return mistyped(name, "a number") }
        return number
    }

    /// A whole number: a JSON number without a fraction, within what `Int` holds.
    mutating func integer(_ name: String, required: Bool = true) -> Int? {
        guard let number = number(name, required: required) else { return nil }
        guard number.rounded() == number, abs(number) < 9_007_199_254_740_992 else { return mistyped(name, "an integer") }
        return Int(number)
    }

    /// An array whose every element is a string.
    mutating func strings(_ name: String, required: Bool = true, null: Null = .absent) -> [String]? {
        guard let value = value(name, required: required, null: null, expected: "an array of strings") else { return nil }
        guard case .array(let elements) = value else { return mistyped(name, "an array of strings") }
        var texts: [String] = []
        for element in elements {
            guard case .string(let text) = element else { return mistyped(name, "an array of strings") }
            texts.append(text)
        }
        return texts
    }

    /// Like `string(_:required:as:)` for an integer member.
    mutating func integer<Value>(_ name: String, required: Bool = true, as make: (Int) throws -> Value?) -> Value? {
        guard let integer = integer(name, required: required) else { return nil }
        return convert(name) { try make(integer) }
    }

    /// Like `string(_:required:as:)` for an array of strings, whose rule may name an element (`options[2]`).
    mutating func strings<Value>(
        _ name: String, required: Bool = true, null: Null = .absent, as make: ([String]) throws -> Value?
    ) -> Value? {
        guard let texts = strings(name, required: required, null: null) else { return nil }
        do {
            return try make(texts)
        } catch let error as ValidationError {
            errors.append(error)
        } catch {
            errors.append(ValidationError(field: name, message: "\(error)"))
        }
        return nil
    }

    /// For members that may be set to null to clear them: absent is nil, null is `.some(nil)`.
    mutating func nullableString(_ name: String) -> String?? {
        consumed.insert(name)
        switch members[name] {
        case nil: return nil
        case .null?: return .some(nil)
        case .string(let text)?: return .some(text)
        case _?: return mistyped(name, "a string or null")
        }
    }

    /// A domain value built from a string member by its type's own rule, whose message is recorded under the
    /// member's name.
    mutating func string<Value>(
        _ name: String, required: Bool = true, null: Null = .absent, as make: (String) throws -> Value?
    ) -> Value? {
        guard let text = string(name, required: required, null: null) else { return nil }
        return convert(name) { try make(text) }
    }

    /// Like `string(_:required:as:)` for a number member.
    mutating func number<Value>(_ name: String, required: Bool = true, as make: (Double) throws -> Value?) -> Value? {
        guard let number = number(name, required: required) else { return nil }
        return convert(name) { try make(number) }
    }

    private mutating func convert<Value>(_ name: String, _ make: () throws -> Value?) -> Value? {
        do {
            return try make()
        } catch let error as ValidationError {
            errors.append(ValidationError(field: name, message: error.message))
        } catch let error as CoordinateError {
            errors.append(ValidationError(field: name, message: error.description))
        } catch {
            errors.append(ValidationError(field: name, message: "\(error)"))
        }
        return nil
    }

    /// Latitude and longitude members, each checked on its own so that both are reported when both are wrong.
    mutating func coordinate(required: Bool = true) -> Coordinate? {
        // Each checked by `Coordinate`'s own rule, so that the range lives in one place.
        let latitude = number("lat", required: required) { value throws(CoordinateError) in
            try Coordinate(latitude: value, longitude: 0).latitude
        }
        let longitude = number("lon", required: required) { value throws(CoordinateError) in
            try Coordinate(latitude: 0, longitude: value).longitude
        }
        guard let latitude, let longitude else { return nil }
        return try? Coordinate(latitude: latitude, longitude: longitude)
    }

    /// A member that is an object, read by `read` as a body of its own; its problems are named `name.member`.
    mutating func object<Value>(_ name: String, required: Bool = true, _ read: (inout JSONBody) -> Value?) -> Value? {
        guard let value = value(name, required: required, null: .absent, expected: "an object") else { return nil }
        guard case .object(let members) = value else { return mistyped(name, "an object") }
        var inner = JSONBody(members: members)
        let result = read(&inner)
        errors += inner.problems.map { ValidationError(field: "\(name).\($0.field)", message: $0.message) }
        return result
    }

    /// A value made by a rule that spans members and refuses with `ServiceError.invalid`, naming them.
    mutating func validated<Value>(_ make: () throws(ServiceError) -> Value) -> Value? {
        do {
            return try make()
        } catch .invalid(let problems) {
            errors += problems
        } catch {
            errors.append(ValidationError(field: "body", message: error.message))
        }
        return nil
    }

    /// No reader has found anything wrong so far: a member missing for a rule that spans members is then the
    /// problem to name, not one already named.
    var isClean: Bool { errors.isEmpty }

    /// A rule that spans members (say, `current_password` only with `password`).
    mutating func reject(_ name: String, _ message: String) {
        errors.append(ValidationError(field: name, message: message))
    }

    private mutating func mistyped<Value>(_ name: String, _ expected: String) -> Value? {
        errors.append(ValidationError(field: name, message: "must be \(expected)"))
        return nil
    }

    // MARK: Outcome

    /// Throws every problem found, including members no reader asked for.
    func finish() throws(APIError) {
        let all = problems
        if !all.isEmpty { throw .invalidInput(all) }
    }

    /// What readers found wrong, then the members no reader asked for.
    private var problems: [ValidationError] {
        errors + members.keys.filter { !consumed.contains($0) }.sorted().map {
            ValidationError(field: String($0.prefix(64)), message: "is not a field of this request")
        }
    }

    /// A value a reader returned after `finish()` passed; nil there means a reader broke its promise.
    func checked<Value>(_ value: Value?) throws(APIError) -> Value {
        guard let value else { throw .invalidInput(errors) }
        return value
    }
}
