import Testing
import VicinityCore
import VicinityPostGIS
import VicinitySpatiaLite
import VicinitySQL

/// The window ledgers a subject's two stores count in: one shared ledger where the record shares it (memory,
/// where both are one store; PostgreSQL), and SpatiaLite's own per process, which is tested as one process.
private func ledgers(_ subject: SocialSubject, _ body: (any WindowLedger, any WindowLedger) async throws -> Void) async throws {
    if let store = subject.store as? InMemoryStore {
        try await body(store.limits, store.limits)
    } else if let store = subject.store as? SpatiaLiteStore {
        try await body(store.limits, store.limits)
    } else if let store = subject.store as? PostGISStore, let peer = subject.peer as? PostGISStore {
        try await body(store, peer)
    } else {
        Issue.record("no window ledger for \(type(of: subject.store))")
    }
}

@Suite("Window ledger contract")
struct WindowLedgerContractTests {
    @Test("a limit allows its count within the window, through either process, and says how long until the next",
          arguments: StoreKind.available)
    func allowsItsCount(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await ledgers(subject) { first, second in
            let rule = RateLimit(limit: 3, window: .seconds(600))
            let wait1 = try await first.acquire(.pokes, key: "a", rule: rule, at: epoch)
            #expect(wait1 == nil)
            let wait2 = try await second.acquire(.pokes, key: "a", rule: rule, at: epoch + .seconds(10))
            #expect(wait2 == nil)
            let wait3 = try await first.acquire(.pokes, key: "a", rule: rule, at: epoch + .seconds(10))
            #expect(wait3 == nil)
            let wait4 = try await second.acquire(.pokes, key: "a", rule: rule, at: epoch + .seconds(10))
            #expect(wait4 == .seconds(590))
            let wait5 = try await first.acquire(.pokes, key: "b", rule: rule, at: epoch + .seconds(10))
            #expect(wait5 == nil, "another key")
            let wait6 = try await first.acquire(.signUps, key: "a", rule: rule, at: epoch + .seconds(10))
            #expect(wait6 == nil, "another scope")
            let wait7 = try await second.acquire(.pokes, key: "a", rule: rule, at: epoch + .seconds(600))
            #expect(wait7 == nil, "the first aged out")
            let wait8 = try await first.acquire(.pokes, key: "a", rule: rule, at: epoch + .seconds(600))
            #expect(wait8 == .seconds(10))
        }
    }

    @Test("sixty events at once through two processes against a limit of twenty: exactly twenty allowed",
          arguments: StoreKind.available)
    func concurrentEventsStopAtTheLimit(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await ledgers(subject) { first, second in
            let rule = RateLimit(limit: 20, window: .seconds(3600))
            let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<60 {
                    let ledger = index % 2 == 0 ? first : second
                    group.addTask { try await ledger.acquire(.signUps, key: "10.0.0.1", rule: rule, at: epoch) == nil }
                }
                return try await group.reduce(into: 0) { if $1 { $0 += 1 } }
            }
            #expect(allowed == 20)
        }
    }

    @Test("steps on two keys at once, sixty through two processes, each counting on both while both allow it: twenty on each",
          arguments: StoreKind.available)
    func stepsOnTwoKeys(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await ledgers(subject) { first, second in
            let rule = RateLimit(limit: 20, window: .seconds(3600))
            let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<60 {
                    let ledger = index % 2 == 0 ? first : second
                    // Half name the keys in the other order: a ledger locks them in one order whatever it is given.
                    let keys = [WindowKey(.voteLookups, "ana", window: rule.window), WindowKey(.voteLookupsFromAddress, "10.0.0.1", window: rule.window)]
                    let given = index % 4 < 2 ? keys : keys.reversed()
                    group.addTask {
                        try await ledger.withWindows(given, at: epoch) { states in
                            let full = states.contains { $0.events.count >= rule.limit }
                            if !full { for index in states.indices { states[index].events.append(epoch.millisecondsSince1970) } }
                            return !full
                        }
                    }
                }
                return try await group.reduce(into: 0) { if $1 { $0 += 1 } }
            }
            #expect(allowed == 20)
            let counts = try await first.withWindows(
                [WindowKey(.voteLookupsFromAddress, "10.0.0.1", window: rule.window), WindowKey(.voteLookups, "ana", window: rule.window)], at: epoch
            ) { states in states.map(\.events.count) }
            #expect(counts == [20, 20], "each key's state is its own, in the order asked")
        }
    }
}
