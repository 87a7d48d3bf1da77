import PostgresNIO
import Foundation
import Synchronization
import Testing
import VicinityBcrypt
import VicinityCore
@testable import VicinityPostGIS
import VicinitySpatiaLite
import VicinitySQL

/// The ledgers a subject's two stores count in: one shared ledger where the record shares it (memory, where
/// both are one store; PostgreSQL), and SpatiaLite's own per process, which is tested as one process.
private func ledgers(_ subject: SocialSubject, _ body: (any GuessingLedger, any GuessingLedger) async throws -> Void) async throws {
    if let store = subject.store as? InMemoryStore {
        try await body(store.guesses, store.guesses)
    } else if let store = subject.store as? SpatiaLiteStore {
        try await body(store.guesses, store.guesses)
    } else if let store = subject.store as? PostGISStore, let peer = subject.peer as? PostGISStore {
        try await body(store, peer)
    } else {
        Issue.record("no guessing ledger for \(type(of: subject.store))")
    }
}

@Suite("Guessing ledger contract")
struct GuessingLedgerContractTests {
    @Test("twenty wrong guesses at one account at once, through two processes, decide five failures and then the lock",
          arguments: StoreKind.available)
    func concurrentGuessesStopAtTheLock(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await ledgers(subject) { first, second in
            let rules = GuessingRules.standard
            let now = epoch
            let failures = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<20 {
                    let ledger = index % 2 == 0 ? first : second
                    group.addTask {
                        guard case .success(let attempt) = try await ledger.begin(
                            .signIn, key: "alice", address: "10.0.0.\(index)", rules: rules, at: now)
                        else { return nil }
                        let count = try await ledger.failed(attempt, rules: rules, at: now)
                        #expect(count.counted)
                        // The failure that locks says so in the same step; none before it is locked.
                        #expect(count.lockedUntil == (count.failures == 5 ? now + rules.firstLock : nil))
                        return count.failures
                    }
                }
                return try await group.reduce(into: [Int]()) { if let count = $1 { $0.append(count) } }
            }
            #expect(failures.sorted() == [1, 2, 3, 4, 5], "each failure counted once, in some order, up to the lock")
            guard case .failure(.key(let wait)) = try await second.begin(.signIn, key: "alice", address: "10.9.9.9", rules: rules, at: now + .seconds(1))
            else {
                Issue.record("the account was not locked")
                return
            }
            #expect(wait == rules.firstLock - .seconds(1))
            // Another scope, another key: not locked.
            guard case .success = try await first.begin(.votePassword, key: "alice", address: "10.9.9.9", rules: rules, at: now) else {
                Issue.record("a lock of one scope reached another")
                return
            }
        }
    }

    @Test("an attempt whose process died stops counting after its lifetime; a success forgets the failures",
          arguments: StoreKind.available)
    func abandonedAttemptsExpire(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await ledgers(subject) { first, second in
            let rules = GuessingRules.standard
            var early: [GuessingAttempt] = []
            for _ in 0..<5 {
                guard case .success(let attempt) = try await first.begin(.votePassword, key: "vote person", address: "a", rules: rules, at: epoch) else {
                    Issue.record("an attempt was refused before the limit")
                    return
                }
                early.append(attempt)
            }
            guard case .failure(.busy) = try await second.begin(.votePassword, key: "vote person", address: "a", rules: rules, at: epoch) else {
                Issue.record("five attempts under way did not hold the sixth back")
                return
            }
            let later = epoch + GuessingBook.attemptLifetime + .milliseconds(1)
            guard case .success(let attempt) = try await second.begin(.votePassword, key: "vote person", address: "a", rules: rules, at: later) else {
                Issue.record("attempts of a dead process still counted after their lifetime")
                return
            }
            #expect(try await second.failed(attempt, rules: rules, at: later) == CountedFailure(failures: 1, counted: true))
            // A check that outlived its attempt's lifetime ends uncounted: its answer is not to be told, and a
            // wrong password is a failure all the same.
            #expect(try await first.failed(early[0], rules: rules, at: later) == CountedFailure(failures: 2, counted: false))
            #expect(try await first.succeeded(early[1], rules: rules, at: later) == false)
            guard case .success(let next) = try await first.begin(.votePassword, key: "vote person", address: "a", rules: rules, at: later) else {
                Issue.record("a refused attempt")
                return
            }
            #expect(try await first.succeeded(next, rules: rules, at: later))
            guard case .success(let after) = try await second.begin(.votePassword, key: "vote person", address: "a", rules: rules, at: later) else {
                Issue.record("a refused attempt")
                return
            }
            #expect(try await second.failed(after, rules: rules, at: later) == CountedFailure(failures: 1, counted: true), "the success forgot the failures before it")
        }
    }

    @Test("a key holding NUL, as a sign-in login may be typed, is counted like any other", arguments: StoreKind.available)
    func keysHoldingNUL(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await ledgers(subject) { first, second in
            let rules = GuessingRules.standard
            for (index, ledger) in [first, second].enumerated() {
                guard case .success(let attempt) = try await ledger.begin(.signIn, key: "ali\u{0}ce", address: "10.0.0.1", rules: rules, at: epoch)
                else {
                    Issue.record("an attempt was refused before the limit")
                    return
                }
                #expect(try await ledger.failed(attempt, rules: rules, at: epoch) == CountedFailure(failures: index + 1, counted: true))
            }
            guard case .success(let other) = try await first.begin(.signIn, key: "alice", address: "10.0.0.1", rules: rules, at: epoch) else {
                Issue.record("an attempt was refused before the limit")
                return
            }
            #expect(try await first.failed(other, rules: rules, at: epoch) == CountedFailure(failures: 1, counted: true), "the key without NUL is another key")
        }
    }
}

@Suite("Limits keyed by a secret", .enabled(if: TestPostGIS.url != nil, "needs PostgreSQL: run Scripts/test.sh"))
struct LimitKeysContractTests {
    @Test("servers over one PostgreSQL database that ask for the secret at once all get the same one, made once")
    func oneSharedSecret() async throws {
        let schema = try await PostGISSchema()
        let keys = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<8 {
                let store = index % 2 == 0 ? schema.store : schema.peer
                group.addTask { try await store.sharedLimitKeys().digest("alice") }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(keys.count == 1)
        let count: Int64? = try await schema.store.rows("SELECT count(*) AS count FROM service_secret").first?.decode("count")
        #expect(count == 1)
        #expect(try await schema.store.sharedLimitKeys().digest("alice") == keys.first, "kept, not made again")
    }

    @Test("failed sign-ins and counted sign-ups leave no username or client address in the database, and still lock and limit")
    func nothingInTheClear() async throws {
        let schema = try await PostGISSchema()
        let keys = try await schema.store.sharedLimitKeys()
        let services = Services(stores: schema.store, hasher: BcryptHasher(cost: .forTesting(4)), limitKeys: keys)
        let peer = Services(stores: schema.peer, hasher: BcryptHasher(cost: .forTesting(4)), limitKeys: try await schema.peer.sharedLimitKeys())
        let address = ClientAddress("203.0.113.77")
        _ = try await services.accounts.signUp(SignUp(
            username: try Username("marisol"), password: try Password("correct horse battery"),
            firstName: try PersonName("Marisol", field: "first_name"), lastName: try PersonName("Test", field: "last_name"), email: nil),
            from: address)
        // Five failures through two servers lock the account, counted together under the shared secret.
        var refusals: [ServiceError] = []
        for index in 0..<6 {
            let front = index % 2 == 0 ? services : peer
            do { _ = try await front.accounts.signIn(login: "Marisol", password: "wrong \(index)", from: address) } catch let error as ServiceError {
                refusals.append(error)
            }
        }
        guard case .rateLimited = refusals.last else {
            Issue.record("the sixth try was not refused by the lock: \(refusals)")
            return
        }
        let stored = try await schema.store.rows("""
            SELECT name || ' ' || state::text AS text FROM guessing
            UNION ALL SELECT name || ' ' || state::text FROM window_limit
            """)
        let texts = try stored.map { try $0.decode("text", as: String.self) }
        #expect(!texts.isEmpty)
        #expect(texts.allSatisfy { !$0.lowercased().contains("marisol") && !$0.contains("203.0.113") }, "\(texts)")
    }
}
