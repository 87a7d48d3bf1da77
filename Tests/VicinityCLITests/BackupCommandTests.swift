import Foundation
import ProcessTestSupport
import Testing

/// The writes a client keeps making while a backup runs, one at a time and in order, each a numbered step whose
/// number is written into the data, so that a backup's contents say which prefix of the steps they hold.
enum WriteLoad {
    /// People who move: most steps set one of their positions, with "step N" as its status.
    static let movers = 4
    /// Every twentieth step signs a new person up ("joinerN"): an account row, with its bcrypt hash.
    static let signUpEvery = 20
    /// At most this many steps: the server allows 100 sign-ups an hour from one address, and the 4 movers and
    /// at most 75 joiners stay under it.
    static let maximumSteps = 1500

    enum Step: Equatable {
        case move(mover: Int)
        case signUp(username: String)
    }

    static func step(_ number: Int) -> Step {
        number % signUpEvery == 0 ? .signUp(username: "joiner\(number)") : .move(mover: number % movers)
    }

    /// The last step at or before `moment` that moved `mover`, if any.
    static func lastMove(of mover: Int, upTo moment: Int) -> Int? {
        stride(from: moment, through: 1, by: -1).first { step($0) == .move(mover: mover) }
    }

    /// The joiners of the steps up to `moment`.
    static func joiners(upTo moment: Int) -> Set<String> {
        Set(stride(from: 1, through: moment, by: 1).compactMap { number in
            if case .signUp(let username) = step(number) { username } else { nil }
        })
    }

    /// Where step `number` puts its mover: around CSULB's Hall of Science, a different spot for each step.
    static func coordinate(_ number: Int) -> (lat: Double, lon: Double) {
        (33.779842 + Double(number % 97) * 1e-5, -118.112526 + Double(number % 89) * 1e-5)
    }

    /// Makes the steps one after another until `log` says stop, each acknowledged before the next begins.
    static func run(through api: API, movers: [Person], log: WriteLog) async throws {
        while let number = await log.begin() {
            switch step(number) {
            case .move(let mover):
                let (lat, lon) = coordinate(number)
                let answer: OwnPosition = try await api.call(
                    "PUT", "/v1/me/position", token: movers[mover].token, json: ["lat": lat, "lon": lon, "status": "step \(number)"])
                await log.acknowledge(number, answer: answer)
            case .signUp(let username):
                _ = try await api.signUp(username)
                await log.acknowledge(number, answer: nil)
            }
        }
    }
}

/// What the writer has done: steps started and acknowledged, and the answer to each move.
actor WriteLog {
    private(set) var started = 0
    private(set) var acknowledged = 0
    private(set) var answers: [Int: OwnPosition] = [:]
    private var stopping = false
    private var failure: String?

    /// The next step's number, or nil once the writer is to stop.
    func begin() -> Int? {
        guard !stopping, started < WriteLoad.maximumSteps else { return nil }
        started += 1
        return started
    }

    func acknowledge(_ number: Int, answer: OwnPosition?) {
        acknowledged = number
        answers[number] = answer
    }

    func stop() { stopping = true }

    /// The writer stopped on an error: waiting ends.
    func fail(_ error: any Error) {
        failure = "\(error)"
        stopping = true
    }

    struct WriterFailed: Error, CustomStringConvertible { let description: String }

    /// Waits until `count` steps are acknowledged, or the writer has run out of steps or failed (the test's time
    /// limit bounds the wait).
    func wait(untilAcknowledged count: Int) async throws {
        while acknowledged < count, started < WriteLoad.maximumSteps {
            if let failure { throw WriterFailed(description: "the writer failed: \(failure)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

@Suite("vicinity backup and restore", .serialized)
struct BackupCommandTests {
    /// Enough places that copying and checking take a while (about 13 MB, 1–2 s in a debug build) while the
    /// writer goes on.
    static let placeCount = 50_000

    static func placesFile(_ scratch: Scratch, count: Int) throws -> String {
        var rows = ["id,name,category,lat,lon"]
        for index in 0..<count {
            rows.append("p\(index),Place \(index),academic,\(33.70 + Double(index % 400) * 0.0005),\(-118.20 + Double(index / 400) * 0.0005)")
        }
        return try scratch.file("places.csv", rows.joined(separator: "\n") + "\n")
    }

    @Test("a backup taken while a server takes writes holds exactly the writes committed before one moment, no gaps, and serving it answers as the original did then",
          .timeLimit(.minutes(5)))
    func backupUnderWriteLoad() async throws {
        let scratch = try Scratch()
        let imported = try await CLI.run(["import", "places", try Self.placesFile(scratch, count: Self.placeCount), "--db", scratch.database])
        #expect(imported.status == 0, "\(imported.errors)")
        let original = try await RunningServer(database: scratch.database)
        defer { original.stop() }
        let api = API(base: original.base)
        var movers: [Person] = []
        for index in 0..<WriteLoad.movers { movers.append(try await api.signUpAndIn("mover\(index)")) }
        for friend in movers.dropFirst() { try await api.befriend(movers[0], friend) }

        let log = WriteLog()
        let team = movers
        let writer = Task {
            do { try await WriteLoad.run(through: api, movers: team, log: log) } catch {
                await log.fail(error)
                throw error
            }
        }
        try await log.wait(untilAcknowledged: 30)
        let acknowledgedBefore = await log.acknowledged
        let backupPath = scratch.folder.appendingPathComponent("backup.sqlite").path
        let backup = try await CLI.runAlongside(["backup", "--db", scratch.database, "--to", backupPath])
        let startedBefore = await log.started
        try await log.wait(untilAcknowledged: startedBefore + 10)
        await log.stop()
        try await writer.value
        #expect(backup.status == 0, "\(backup.errors)")
        #expect(backup.output.contains("integrity ok"))
        #expect(startedBefore < WriteLoad.maximumSteps, "the writer ran out of steps before the backup ended")

        // The file as SQLite alone reads it: sound, and every reference (sessions, positions and friendships to
        // accounts) resolved.
        #expect(try SQLiteProbe.rows(backupPath, "PRAGMA integrity_check") == [["ok"]])
        #expect(try SQLiteProbe.rows(backupPath, "PRAGMA foreign_key_check") == [])
        #expect(try SQLiteProbe.rows(backupPath, "SELECT count(*) FROM session") == [["\(WriteLoad.movers)"]])
        // Each friendship is two rows, one each way, made in one transaction: both or neither.
        #expect(try SQLiteProbe.rows(backupPath, "SELECT count(*) FROM friendship") == [["\(2 * (WriteLoad.movers - 1))"]])
        #expect(try SQLiteProbe.rows(backupPath, """
            SELECT count(*) FROM friendship AS mine WHERE NOT EXISTS
                (SELECT 1 FROM friendship AS theirs WHERE theirs.account_id = mine.friend_id AND theirs.friend_id = mine.account_id)
            """) == [["0"]])
        let statuses = try SQLiteProbe.rows(backupPath, """
            SELECT a.username, p.status FROM user_position AS p JOIN account AS a ON a.id = p.account_id
            """)
        var moved: [String: Int] = [:]
        for row in statuses {
            let username = try #require(row.first ?? nil), status = try #require(row.last ?? nil)
            moved[username] = try #require(Int(status.dropFirst("step ".count)))
        }
        // The moment: the last step in the backup. Every step acknowledged before the backup began is at or
        // before it; steps went on being committed after it while the backup ran.
        let moment = try #require(moved.values.max())
        #expect(moment >= acknowledgedBefore, "steps up to \(acknowledgedBefore) were acknowledged before the backup began")
        #expect(moment < startedBefore, "the server took writes after the backup's moment while it ran")
        // No gaps: each mover's position is their last move up to the moment, not an earlier one.
        for (index, mover) in movers.enumerated() {
            #expect(moved[mover.username] == WriteLoad.lastMove(of: index, upTo: moment), "\(mover.username)")
        }
        // The sign-ups are exactly those up to the moment (a sign-up right after the last move may be in).
        let usernames = Set(try SQLiteProbe.rows(backupPath, "SELECT username FROM account").compactMap { $0.first ?? nil })
        let joiners = usernames.filter { $0.hasPrefix("joiner") }
        let cut = joiners.contains("joiner\(moment + 1)") ? moment + 1 : moment
        #expect(joiners == WriteLoad.joiners(upTo: cut))
        #expect(usernames == joiners.union(movers.map(\.username)))

        // Served, the backup answers as the original did at that moment: each mover's own position is what the
        // original answered to their last move, the first mover's friends are where those moves put them, and
        // the people search finds the same joiners. The original's tokens still work: sessions are in it.
        let copy = try await RunningServer(database: backupPath)
        defer { copy.stop() }
        let served = API(base: copy.base)
        var answers: [String: OwnPosition] = [:]
        for (index, mover) in movers.enumerated() {
            let last = try #require(WriteLoad.lastMove(of: index, upTo: moment))
            let expected = try #require(await log.answers[last])
            let answer: OwnPosition = try await served.call("GET", "/v1/me/position", token: mover.token)
            #expect(answer == expected, "\(mover.username)")
            answers[mover.id] = answer
        }
        let friends: API.Friends = try await served.call("GET", "/v1/friends", token: movers[0].token)
        #expect(Set(friends.friends.map(\.id)) == Set(movers.dropFirst().map(\.id)))
        for friend in friends.friends {
            #expect(friend.status == answers[friend.id]?.status)
            #expect(friend.updated_at == answers[friend.id]?.updated_at)
        }
        let people: API.People = try await served.call("GET", "/v1/users?q=joiner&limit=500", token: movers[0].token)
        #expect(Set(people.users.map(\.username)) == joiners)
    }

    @Test("restore puts back what the backup held: the restored file answers as the backup did, and the backup is not changed",
          .timeLimit(.minutes(3)))
    func restoreRoundTrip() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/csulb-buildings.csv"), "--db", scratch.database]).status == 0)
        let questions = [
            ["closest", "--lat", "13.746549", "--lon", "100.492766", "--json"],
            ["nearby", "--lat", "33.779842", "--lon", "-118.112526", "--radius", "300", "--json"],
        ]
        func answers() async throws -> [String] {
            var answers: [String] = []
            for question in questions { answers.append(try await CLI.run(question + ["--db", scratch.database]).output) }
            return answers
        }

        let server = try await RunningServer(database: scratch.database)
        let api = API(base: server.base)
        _ = try await api.signUp("keeper")
        let before = try await answers()
        let backupPath = scratch.folder.appendingPathComponent("backup.sqlite").path
        let backup = try await CLI.run(["backup", "--db", scratch.database, "--to", backupPath])
        #expect(backup.status == 0, "\(backup.errors)")
        let backupBytes = try Data(contentsOf: URL(fileURLWithPath: backupPath))

        // The original changes: a new account, and places in Bangkok, nearer the first question.
        _ = try await api.signUp("latecomer")
        #expect(try await CLI.run(["import", "places", CLI.path("Data/bangkok-temples.csv"), "--db", scratch.database]).status == 0)
        #expect(try await answers() != before)

        // Not while the server has the file open.
        let refused = try await CLI.run(["restore", "--from", backupPath, "--db", scratch.database])
        #expect(refused.status == 1)
        #expect(refused.errors.contains("is open in another process (pid \(server.processIdentifier))"), "\(refused.errors)")
        #expect(try await api.signIn("latecomer").status == 201, "the server goes on with its file")
        server.stop()

        let restored = try await CLI.run(["restore", "--from", backupPath, "--db", scratch.database])
        #expect(restored.status == 0, "\(restored.errors)")
        #expect(restored.output.contains("replacing what it held"))
        #expect(try await answers() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: backupPath)) == backupBytes, "the backup is read, never written")
        let again = try await RunningServer(database: scratch.database)
        defer { again.stop() }
        let restoredAPI = API(base: again.base)
        #expect(try await restoredAPI.signIn("keeper").status == 201)
        #expect(try await restoredAPI.signIn("latecomer").status == 401)
        #expect(!scratch.contents.contains { $0.contains(".partial-") })
    }

    @Test("backup refuses an existing file without --replace and replaces it with --replace; nothing is left half made",
          .timeLimit(.minutes(2)))
    func existingTarget() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/bangkok-temples.csv"), "--db", scratch.database]).status == 0)
        let target = try scratch.file("backup.sqlite", "an operator's file, not to be lost\n")
        let refused = try await CLI.run(["backup", "--db", scratch.database, "--to", target])
        #expect(refused.status == 1)
        #expect(refused.errors.contains("\(target) already exists: give --replace"))
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "an operator's file, not to be lost\n")

        let replaced = try await CLI.run(["backup", "--db", scratch.database, "--to", target, "--replace"])
        #expect(replaced.status == 0, "\(replaced.errors)")
        #expect(replaced.output.contains("15 places"))
        let closest = ["closest", "--lat", "13.746549", "--lon", "100.492766", "--json"]
        #expect(try await CLI.run(closest + ["--db", target]).output == (try await CLI.run(closest + ["--db", scratch.database]).output))
        #expect(!scratch.contents.contains { $0.contains(".partial-") })

        let nowhere = scratch.folder.appendingPathComponent("no-such-folder/backup.sqlite").path
        let noFolder = try await CLI.run(["backup", "--db", scratch.database, "--to", nowhere])
        #expect(noFolder.status == 1)
        #expect(noFolder.errors.contains("the folder \(scratch.folder.appendingPathComponent("no-such-folder").path) does not exist"), "\(noFolder.errors)")

        let missing = try await CLI.run(["backup", "--db", scratch.folder.appendingPathComponent("none.sqlite").path, "--to", target + "2"])
        #expect(missing.status == 66)
        #expect(missing.errors.contains("there is no database at"))
        #expect(!scratch.contents.contains("none.sqlite"), "a backup never creates the database it copies")
    }

    @Test("restore refuses a damaged backup (status 65), and one a newer version wrote, and changes nothing",
          .timeLimit(.minutes(2)))
    func badBackups() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/csulb-buildings.csv"), "--db", scratch.database]).status == 0)
        let backupPath = scratch.folder.appendingPathComponent("backup.sqlite").path
        #expect(try await CLI.run(["backup", "--db", scratch.database, "--to", backupPath]).status == 0)
        // The database to restore into now holds something else, which must survive a refused restore.
        let target = scratch.folder.appendingPathComponent("live.sqlite").path
        #expect(try await CLI.run(["import", "places", CLI.path("Data/bangkok-temples.csv"), "--db", target]).status == 0)
        let targetBytes = try Data(contentsOf: URL(fileURLWithPath: target))

        let damaged = scratch.folder.appendingPathComponent("damaged.sqlite").path
        try FileManager.default.copyItem(atPath: backupPath, toPath: damaged)
        try damage(damaged, pages: 4)
        let damagedBytes = try Data(contentsOf: URL(fileURLWithPath: damaged))
        let refused = try await CLI.run(["restore", "--from", damaged, "--db", target])
        #expect(refused.status == 65)
        #expect(refused.errors.contains("not restored, \(target) unchanged"))
        #expect(refused.errors.contains("is damaged"), "\(refused.errors)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == targetBytes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: damaged)) == damagedBytes)

        let newer = scratch.folder.appendingPathComponent("newer.sqlite").path
        try FileManager.default.copyItem(atPath: backupPath, toPath: newer)
        _ = try SQLiteProbe.rows(newer, "INSERT INTO grdb_migrations (identifier) VALUES ('v99 from the future')")
        let tooNew = try await CLI.run(["restore", "--from", newer, "--db", target])
        #expect(tooNew.status == 65)
        #expect(tooNew.errors.contains("written by a newer version of vicinity (migrations this version does not know: v99 from the future)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == targetBytes)

        let notADatabase = try scratch.file("notes.txt", String(repeating: "not a database\n", count: 400))
        let notRestored = try await CLI.run(["restore", "--from", notADatabase, "--db", target])
        #expect(notRestored.status == 65)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == targetBytes)
        #expect(!scratch.contents.contains { $0.contains(".partial-") }, "\(scratch.contents)")
    }

    @Test("an interrupted backup leaves neither the target nor a partial file", .timeLimit(.minutes(3)))
    func interruptedBackup() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", try Self.placesFile(scratch, count: Self.placeCount), "--db", scratch.database]).status == 0)
        let target = scratch.folder.appendingPathComponent("backup.sqlite").path
        let backup = try CLI.makeProcess(["backup", "--db", scratch.database, "--to", target])
        backup.standardOutput = FileHandle.nullDevice
        backup.standardError = FileHandle.nullDevice
        try ChildProcesses.launch(backup)
        // Once it copies (its partial file is there), while it copies or checks: together they take far longer than
        // a look every 10 ms for 50,000 places in a debug build. Nothing signals across the process boundary.
        while backup.isRunning, !scratch.contents.contains(where: { $0.contains(".partial-") }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        kill(backup.processIdentifier, SIGINT)
        backup.waitUntilExit()
        #expect(backup.terminationReason == .exit)
        #expect(backup.terminationStatus == 130)
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(!scratch.contents.contains { $0.contains(".partial-") }, "\(scratch.contents)")
    }

    @Test("given a PostgreSQL URL, backup and restore print the pg_dump and pg_restore commands without the password and exit with status 64")
    func postgreSQLAdvice() async throws {
        let url = "postgres://vicinity:hunter2@db.campus.example:5433/vicinity?sslmode=require"
        let backup = try await CLI.run(["backup", "--db", url, "--to", "vicinity.dump"])
        #expect(backup.status == 64)
        #expect(backup.errors.contains(
            "pg_dump -Fc --no-owner --file='vicinity.dump' --dbname='postgres://vicinity@db.campus.example:5433/vicinity?sslmode=require'"))
        #expect(backup.errors.contains("pg_restore --clean --if-exists --no-owner --single-transaction"))
        let restore = try await CLI.run(["restore", "--from", "vicinity.dump", "--db", url])
        #expect(restore.status == 64)
        #expect(restore.errors.contains(
            "pg_restore --clean --if-exists --no-owner --single-transaction --dbname='postgres://vicinity@db.campus.example:5433/vicinity?sslmode=require' 'vicinity.dump'"))
        for outcome in [backup, restore] {
            #expect(!outcome.errors.contains("hunter2") && !outcome.output.contains("hunter2"))
        }
        #expect(!FileManager.default.fileExists(atPath: "vicinity.dump"))
    }
}
