import Foundation
import VicinityCore

/// How the ledgers' states (`guessing`, `window_limit`) are kept in a `jsonb` column: a new row holds `{}`,
/// read as the state's empty value; keys are written sorted, so an unchanged state writes the same text.
enum LedgerStateText {
    static func decode<State: Decodable>(_ text: String, empty: State, what: String) throws -> State {
        guard text != "{}" else { return empty }
        do {
            return try JSONDecoder().decode(State.self, from: Data(text.utf8))
        } catch {
            throw StoreError.corrupt("\(what) is not readable: \(error)")
        }
    }

    static func encode<State: Encodable>(_ state: State) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(state), as: UTF8.self)
    }
}
