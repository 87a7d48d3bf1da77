import Logging
import Synchronization
import Testing
import VicinityCore
import VicinityPostGIS
import VicinitySQL

/// The transactions a PostGIS store ran again, each with the SQLSTATE that ended its attempt, read from the
/// store's own debug line: PostgreSQL ends one party of a deadlock (40P01) only after its `deadlock_timeout`,
/// and the store then runs the whole transaction again, so a deadlock shows in nothing else the caller sees.
final class RetryLog: Sendable {
    private let states = Mutex<[String]>([])

    var sqlStates: [String] { states.withLock { $0 } }

    var logger: Logger {
        var logger = Logger(label: "vicinity.test.retries") { _ in Handler(log: self) }
        logger.logLevel = .debug
        return logger
    }

    struct Handler: LogHandler {
        let log: RetryLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard event.message.description == "transaction retried" else { return }
            let state = event.metadata?["sqlstate"]?.description ?? "none given"
            log.states.withLock { $0.append(state) }
        }
    }
}

@Suite("PostGIS lock order")
struct PostGISLockOrderTests {
    /// Six friends, each with a nearby alert on each of the others: every pair's two alerts are in the lists of
    /// both people, so two writers taking different people's lists both want the rows of their pair.
    @Test("writers moving overlapping alerts, listed in every order, through two stores never deadlock, and each alert moved tells exactly once",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func overlappingAlertChangesNeverDeadlock() async throws {
        let retries = RetryLog()
        let schema = try await PostGISSchema(logger: retries.logger)
        let people = try (0..<6).map { try account("racer\($0)") }
        for person in people { try await schema.store.createAccount(person, passwordHash: someHash) }
        for (place, watcher) in people.enumerated() {
            for watched in people[(place + 1)...] {
                try await schema.store.befriend(watcher.id, watched.id)
                for (one, other) in [(watcher, watched), (watched, watcher)] {
                    let added = Alert(id: .random(), watcher: one.id, watched: other.id, target: .nearby, radius: try AlertRadius(meters: 300), createdAt: epoch)
                    #expect(try await schema.store.addAlert(added, limit: 10) == .added(added))
                }
            }
        }
        let summaries = Dictionary(uniqueKeysWithValues: people.map { ($0.id, $0.summary) })

        // Each writer reads one person's ten alerts as they are now and moves them all on, in a random order:
        // the state each expects is often already gone (another writer moved it), which changes nothing.
        let told = try await withThrowingTaskGroup(of: [UserID].self) { group in
            for racer in 0..<12 {
                let store: any SocialStore = racer % 2 == 0 ? schema.store : schema.peer
                group.addTask {
                    var recipients: [UserID] = []
                    for round in 0..<25 {
                        let person = people[(racer + round) % people.count].id
                        let time = epoch + .seconds(Int64(racer * 100 + round))
                        var changes: [AlertChange] = []
                        for alert in try await store.alerts(involving: person).shuffled() {
                            let notice = AlertNotice(
                                alert: alert.id, friend: try #require(summaries[alert.watched]), placeName: nil, radius: alert.radius.distance)
                            changes.append(AlertChange(
                                alert: alert, to: !(alert.inside ?? false), toldAt: time, telling: .alert(.friendNearby, to: alert.watcher, notice, at: time)))
                        }
                        let moved = try await store.advance(changes)
                        recipients += changes.filter { moved.contains($0.alert) }.map(\.watcher)
                    }
                    return recipients
                }
            }
            return try await group.reduce(into: [UserID]()) { $0 += $1 }
        }

        #expect(retries.sqlStates.isEmpty, "transactions ran again: \(retries.sqlStates)")
        #expect(!told.isEmpty)
        for person in people {
            let events = try await schema.store.events(for: person.id, after: nil, since: epoch, limit: 10_000)
            #expect(events.count == told.filter { $0 == person.id }.count, "one event for each alert moved that watches for \(person.username)")
        }
        withExtendedLifetime(schema) {}
    }
}
