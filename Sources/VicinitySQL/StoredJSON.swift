import GeoCore
import VicinityCore

/// The JSON both SQL stores keep in their JSON columns (aliases, attributes, a vote's options), written the
/// same way by every writer, with `JSONValue`'s own parser on the way back: on the read path of every query,
/// `JSONDecoder`'s per-call set-up dominated.
enum StoredJSON {
    static func texts(_ texts: [String]) -> String {
        String(decoding: JSONValue.array(texts.map(JSONValue.string)).jsonBytes, as: UTF8.self)
    }

    static func attributes(_ attributes: [String: String]) -> String {
        String(decoding: JSONValue.object(attributes.mapValues(JSONValue.string)).jsonBytes, as: UTF8.self)
    }

    /// A JSON array of strings; anything else is a corrupt store.
    static func texts(_ text: String, of what: @autoclosure () -> String) throws(StoreError) -> [String] {
        guard case .array(let values) = try parse(text, of: what()) else { throw .corrupt("\(what()) are not a JSON array") }
        return try values.map { value throws(StoreError) in
            guard case .string(let text) = value else { throw .corrupt("\(what()) hold something that is not text") }
            return text
        }
    }

    /// A JSON object of strings; anything else is a corrupt store.
    static func attributes(_ text: String, of what: @autoclosure () -> String) throws(StoreError) -> [String: String] {
        guard case .object(let values) = try parse(text, of: what()) else { throw .corrupt("\(what()) are not a JSON object") }
        var attributes: [String: String] = [:]
        for (key, value) in values {
            guard case .string(let text) = value else { throw .corrupt("\(what()) hold something that is not text") }
            attributes[key] = text
        }
        return attributes
    }

    static func parse(_ text: String, of what: @autoclosure () -> String) throws(StoreError) -> JSONValue {
        do throws(JSONValue.ParseError) {
            return try JSONValue(jsonBytes: text.utf8)
        } catch {
            throw .corrupt("\(what()) are not JSON: \(error.description)")
        }
    }
}
