import Foundation
import PostgresNIO
import VicinityCore

/// Failed password checks in the `guessing` table, so that every server over the database counts them
/// together. Each step locks the address's row and then the key's (always in that order, so two steps never
/// wait for each other in a circle), runs `GuessingBook`'s rule on them and writes them back, in one
/// transaction: attempts through different servers take turns on the same key or address, and the count
/// after them is what one server would have reached.
extension PostGISStore: GuessingLedger {
    public func begin(
        _ scope: GuessingScope, key: String, address: String, rules: GuessingRules, at now: Timestamp
    ) async throws -> Result<GuessingAttempt, GuessingRefusal> {
        let id = GuessingBook.newAttemptID()
        let attempt = GuessingAttempt(id: id, scope: scope, key: key, address: address)
        if guessingPruning.due(at: now) {
            // Rows a step has just made say they are kept for an attempt's lifetime (below), so none is pruned
            // between its insert and its lock.
            try await execute("DELETE FROM guessing WHERE kept_until < \(now.millisecondsSince1970)")
        }
        return try await guessingStep(attempt, rules: rules, at: now) { key, address -> Result<GuessingAttempt, GuessingRefusal> in
            if let refusal = GuessingBook.begin(id: id, key: &key, address: &address, rules: rules, at: now) {
                return .failure(refusal)
            }
            return .success(attempt)
        }
    }

    public func succeeded(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws -> Bool {
        try await guessingStep(attempt, rules: rules, at: now) { key, address in
            GuessingBook.succeeded(id: attempt.id, key: &key, address: &address)
        }
    }

    public func failed(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws -> CountedFailure {
        try await guessingStep(attempt, rules: rules, at: now) { key, address in
            GuessingBook.failed(id: attempt.id, key: &key, address: &address, rules: rules, at: now)
        }
    }

    public func abandoned(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws {
        try await guessingStep(attempt, rules: rules, at: now) { key, address in
            GuessingBook.abandoned(id: attempt.id, key: &key, address: &address)
        }
    }

    /// Locks the attempt's address and key rows (made empty when missing; the insert locks them already and
    /// keeps them from pruning for an attempt's lifetime), runs `step` on their states and writes them back; a refused `begin` changes its states too (expired attempts, forgotten failures), which
    /// is as `GuessingBook` would leave them in memory.
    private func guessingStep<Value: Sendable>(
        _ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp,
        _ step: @escaping @Sendable (inout GuessingKeyState, inout GuessingAddressState) -> Value
    ) async throws -> Value {
        let scope = attempt.scope.rawValue
        let fresh = (now + GuessingBook.attemptLifetime).millisecondsSince1970
        let keyName = Self.guessingName(attempt.key), addressName = Self.guessingName(attempt.address)
        return try await transaction { transaction in
            try await transaction.execute("""
                INSERT INTO guessing (scope, kind, name, state, kept_until)
                VALUES (\(scope), 'address', \(addressName), '{}', \(fresh)), (\(scope), 'key', \(keyName), '{}', \(fresh))
                ON CONFLICT (scope, kind, name) DO UPDATE SET kept_until = greatest(guessing.kept_until, excluded.kept_until)
                """)
            let rows = try await transaction.rows("""
                SELECT kind, state::text AS state FROM guessing
                WHERE scope = \(scope) AND ((kind = 'address' AND name = \(addressName)) OR (kind = 'key' AND name = \(keyName)))
                ORDER BY kind FOR UPDATE
                """)
            var key = GuessingKeyState(), address = GuessingAddressState()
            for row in rows {
                let text: String = try row.decode("state")
                let what = "a guessing state of \(scope)"
                switch try row.decode("kind", as: String.self) {
                case "address": address = try LedgerStateText.decode(text, empty: address, what: what)
                default: key = try LedgerStateText.decode(text, empty: key, what: what)
                }
            }
            let value = step(&key, &address)
            let keyText = try LedgerStateText.encode(key)
            let addressText = try LedgerStateText.encode(address)
            try await transaction.execute("""
                UPDATE guessing SET state = \(keyText)::jsonb, kept_until = \(GuessingBook.keptUntil(key, rules: rules))
                WHERE scope = \(scope) AND kind = 'key' AND name = \(keyName)
                """)
            try await transaction.execute("""
                UPDATE guessing SET state = \(addressText)::jsonb, kept_until = \(GuessingBook.keptUntil(address, rules: rules))
                WHERE scope = \(scope) AND kind = 'address' AND name = \(addressName)
                """)
            return value
        }
    }

    /// A key or address as the `guessing` table keeps it. PostgreSQL's text cannot carry NUL, which a sign-in
    /// login may hold as typed (and then names nobody): it is kept as U+FFFD, so such logins are counted
    /// like any other.
    static func guessingName(_ text: String) -> String {
        guard text.utf8.contains(0) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value == 0 ? "\u{FFFD}" : $0 }))
    }
}
