import Foundation
import PostgresNIO
import VicinityCore

/// Window limits in the `window_limit` table, so that every server over the database counts them together:
/// each step locks the key's row (made empty when missing), runs on its state and writes it back, in one
/// transaction, so steps through different servers on one key take turns.
extension PostGISStore: WindowLedger {
    public func withWindow<Value: Sendable>(
        _ scope: WindowScope, key: String, window: Duration, at now: Timestamp,
        _ step: @escaping @Sendable (inout WindowState) -> Value
    ) async throws -> Value {
        let scopeName = scope.rawValue
        if windowPruning.due(at: now) {
            // A row a step has just made says it is kept for a reservation's lifetime (below), so none is
            // pruned between its insert and its lock.
            try await execute("DELETE FROM window_limit WHERE kept_until < \(now.millisecondsSince1970)")
        }
        let fresh = (now + WindowReservation.lifetime).millisecondsSince1970
        return try await transaction { transaction in
            let rows = try await transaction.rows("""
                INSERT INTO window_limit (scope, name, state, kept_until) VALUES (\(scopeName), \(key), '{}', \(fresh))
                ON CONFLICT (scope, name) DO UPDATE SET kept_until = greatest(window_limit.kept_until, excluded.kept_until)
                RETURNING state::text AS state
                """)
            var state = WindowState()
            for row in rows {
                let text: String = try row.decode("state")
                guard text != "{}" else { continue }
                do {
                    state = try JSONDecoder().decode(WindowState.self, from: Data(text.utf8))
                } catch {
                    throw StoreError.corrupt("a window limit state of \(scopeName) is not readable: \(error)")
                }
            }
            state.tidy(at: now, window: window)
            let value = step(&state)
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let text = String(decoding: try encoder.encode(state), as: UTF8.self)
            try await transaction.execute("""
                UPDATE window_limit SET state = \(text)::jsonb, kept_until = \(state.keptUntil(window: window))
                WHERE scope = \(scopeName) AND name = \(key)
                """)
            return value
        }
    }
}
