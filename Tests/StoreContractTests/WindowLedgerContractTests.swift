import Testing
import VicinityCore
import VicinityPostGIS
import VicinitySpatiaLite

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

    @Test("places held count until decided: committed they are events, cancelled they free their place; a lost one expires",
          arguments: StoreKind.available)
    func reservations(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await ledgers(subject) { first, second in
            let rule = RateLimit(limit: 3, window: .seconds(600))
            var places: [WindowReservation] = []
            for index in 0..<3 {
                let (place, wasClear) = try await (index % 2 == 0 ? first : second).reserve(.voteLookups, key: "a", rule: rule, at: epoch)
                #expect(wasClear == (index == 0))
                places.append(try place.get())
            }
            let (refused, _) = try await second.reserve(.voteLookups, key: "a", rule: rule, at: epoch)
            #expect(throws: WindowRefusal(wait: .seconds(1)), "three undecided fill the limit") { try refused.get() }
            let wait9 = try await first.acquire(.voteLookups, key: "a", rule: rule, at: epoch)
            #expect(wait9 == .seconds(1))
            try await second.cancel(places[0], rule: rule, at: epoch)
            let (again, _) = try await first.reserve(.voteLookups, key: "a", rule: rule, at: epoch)
            places[0] = try again.get()
            for place in places { try await second.commit(place, rule: rule, at: epoch + .seconds(100)) }
            let wait10 = try await first.acquire(.voteLookups, key: "a", rule: rule, at: epoch + .seconds(100))
            #expect(wait10 == .seconds(600))
            // A place whose process died stops counting after its lifetime.
            let (lost, _) = try await first.reserve(.voteLookups, key: "b", rule: rule, at: epoch)
            _ = try lost.get()
            for _ in 0..<2 {
                let wait = try await second.acquire(.voteLookups, key: "b", rule: rule, at: epoch)
                #expect(wait == nil)
            }
            let wait11 = try await second.acquire(.voteLookups, key: "b", rule: rule, at: epoch)
            #expect(wait11 == .seconds(600), "two events and the lost place fill the limit")
            let expired = epoch + WindowReservation.lifetime + .milliseconds(1)
            let wait12 = try await second.acquire(.voteLookups, key: "b", rule: rule, at: expired)
            #expect(wait12 == nil)
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
}
