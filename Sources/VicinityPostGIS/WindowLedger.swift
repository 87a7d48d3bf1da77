import Foundation
import PostgresNIO
import VicinityCore

/// Window limits in the `window_limit` table, so that every server over the database counts them together.
/// A step locks its keys' rows (made empty when missing) in one statement, in the order of scope and name
/// (so that two steps never wait for each other in a circle), runs on their states and writes back those it
/// changed in one more, in one transaction: steps through different servers on one key take turns.
extension PostGISStore: WindowLedger {
    public func withWindows<Value: Sendable>(
        _ keys: [WindowKey], at now: Timestamp, _ step: @escaping @Sendable (inout [WindowState]) -> Value
    ) async throws -> Value {
        if windowPruning.due(at: now) {
            // A row a step has just made says it is kept a minute (below), far longer than a step takes, so
            // none is pruned before its step writes the time it is really kept until.
            try await execute("DELETE FROM window_limit WHERE kept_until < \(now.millisecondsSince1970)")
        }
        let order = keys.indices.sorted { (keys[$0].scope.rawValue, keys[$0].key) < (keys[$1].scope.rawValue, keys[$1].key) }
        let scopes = order.map { keys[$0].scope.rawValue }, names = order.map { keys[$0].key }
        let fresh = (now + .seconds(60)).millisecondsSince1970
        return try await transaction { transaction in
            // Counts lost with the last moments before a crash of PostgreSQL let those few events through again:
            // not worth waiting for a flush of the log at every lookup, poke or sign-up.
            try await transaction.execute("SET LOCAL synchronous_commit TO off")
            let rows = try await transaction.rows("""
                INSERT INTO window_limit (scope, name, state, kept_until)
                SELECT scope, name, '{}', \(fresh) FROM unnest(\(scopes)::text[], \(names)::text[]) WITH ORDINALITY AS k (scope, name, n)
                ORDER BY n
                ON CONFLICT (scope, name) DO UPDATE SET kept_until = greatest(window_limit.kept_until, excluded.kept_until)
                RETURNING scope, name, state::text AS state
                """)
            var found: [String: [String: WindowState]] = [:]
            for row in rows {
                let scope: String = try row.decode("scope"), name: String = try row.decode("name"), text: String = try row.decode("state")
                found[scope, default: [:]][name] = try LedgerStateText.decode(text, empty: WindowState(), what: "a window limit state of \(scope)")
            }
            var states = keys.map { key in
                var state = found[key.scope.rawValue]?[key.key] ?? WindowState()
                state.tidy(at: now, window: key.window)
                return state
            }
            let before = states
            let value = step(&states)
            // A step that only looked (a lookup that found its vote) writes no state back.
            guard states != before else { return value }
            let texts = try order.map { try LedgerStateText.encode(states[$0]) }
            let kept = order.map { states[$0].keptUntil(window: keys[$0].window) }
            try await transaction.execute("""
                UPDATE window_limit SET state = k.state::jsonb, kept_until = k.kept_until
                FROM unnest(\(scopes)::text[], \(names)::text[], \(texts)::text[], \(kept)::bigint[]) AS k (scope, name, state, kept_until)
                WHERE window_limit.scope = k.scope AND window_limit.name = k.name
                """)
            return value
        }
    }
}
