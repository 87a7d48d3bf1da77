import Foundation
import GRDB
import Logging
import PostgresNIO
import Testing
import VicinityCore
@testable import VicinityPostGIS
@testable import VicinitySpatiaLite

/// The triggers that note alert changes, driven by hand-written updates no service makes: only an update of an
/// alert's state alone is noted as a move (`Change.alertMoved`), which a front holding that state reads nothing
/// again for; any other update is noted as a plain alert change.
@Suite("Alert moves noted by the stores' triggers")
struct AlertMoveNoteTests {
    /// Ana holding an alert on Ben, friends, in `store`.
    private static func anaWatchingBen(_ store: some SocialStore) async throws -> (ben: UserID, Alert) {
        let ana = try account("ana"), ben = try account("ben")
        for person in [ana, ben] { try await store.createAccount(person, passwordHash: someHash) }
        try await store.befriend(ana.id, ben.id)
        let alert = Alert(id: .random(), watcher: ana.id, watched: ben.id, target: .nearby, radius: try AlertRadius(meters: 200), createdAt: epoch)
        #expect(try await store.addAlert(alert, limit: 10) == .added(alert))
        return (ben.id, alert)
    }

    /// Runs the three updates through `execute` and checks what each noted.
    private static func check<Feed: ChangeFeed & SocialStore>(_ store: Feed, execute: (String) async throws -> Void) async throws {
        let (ben, alert) = try await anaWatchingBen(store)
        var cursor = try await store.changeCursor()
        try await execute("UPDATE friend_alert SET inside = true, told_at = 1700000000123")
        #expect(try await changesSince(&cursor, in: store) == [
            .alertMoved(AlertMove(watched: ben, alert: alert.id, inside: true, toldAt: Timestamp(millisecondsSince1970: 1_700_000_000_123))),
        ])
        try await execute("UPDATE friend_alert SET radius_m = 300")
        #expect(try await changesSince(&cursor, in: store) == [.alerts(ben)], "the radius changed: a plain change")
        try await execute("UPDATE friend_alert SET inside = false, created_at = created_at + 1")
        #expect(try await changesSince(&cursor, in: store) == [.alerts(ben)], "the state and more changed: a plain change")
        try await execute("UPDATE friend_alert SET told_at = NULL")
        #expect(try await changesSince(&cursor, in: store) == [.alertMoved(AlertMove(watched: ben, alert: alert.id, inside: false, toldAt: nil))])
    }

    @Test("SpatiaLite notes an update of an alert's state alone as a move with the state it left, and any other update as a plain alert change")
    func spatiaLite() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        try await Self.check(store) { sql in try await store.pool.write { db in try db.execute(sql: sql) } }
    }

    @Test("PostGIS notes an update of an alert's state alone as a move with the state it left, and any other update as a plain alert change",
          .enabled(if: TestPostGIS.url != nil))
    func postGIS() async throws {
        try await TestPostGIS.withStore(try TestPostGIS.configuration(schema: TestPostGIS.freshSchemaName())) { store in
            try await Self.check(store) { sql in try await store.execute(PostgresQuery(unsafeSQL: sql)) }
        }
    }
}
