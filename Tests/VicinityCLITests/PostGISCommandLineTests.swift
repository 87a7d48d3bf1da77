import Foundation
import Testing

/// The command line over a PostgreSQL server (`VICINITY_TEST_POSTGRES_URL`, which Scripts/test.sh sets);
/// the cases that need no server run always.
@Suite("The vicinity command line over PostgreSQL")
struct PostGISCommandLineTests {
    static let server = ProcessInfo.processInfo.environment["VICINITY_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// The test server's URL with a password the server does not need (it trusts loopback) and a schema of the
    /// test's own, left for the next run's fresh database to drop.
    static func url(secret: String) throws -> String {
        let base = try #require(server)
        let withSecret = base.replacingOccurrences(of: "postgres://vicinity@", with: "postgres://vicinity:\(secret)@")
        let schema = "cli_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return withSecret + (withSecret.contains("?") ? "&" : "?") + "schema=\(schema)"
    }

    @Test("import, closest and nearby over a server answer exactly as over a file, and no message shows the password",
          .enabled(if: server != nil, "no PostgreSQL: run Scripts/test.sh, or set VICINITY_TEST_POSTGRES_URL"))
    func sameAnswersAsAFile() async throws {
        let scratch = try Scratch()
        let secret = "never-shown-\(UUID().uuidString.prefix(8))"
        let url = try Self.url(secret: secret)
        var outcomes: [CLI.Outcome] = []
        for file in ["Data/csulb-buildings.csv", "Data/bangkok-temples.csv"] {
            let onServer = try await CLI.run(["import", "places", CLI.path(file), "--db", url])
            let onFile = try await CLI.run(["import", "places", CLI.path(file), "--db", scratch.database])
            #expect(onServer.status == 0, "\(onServer.errors)")
            #expect(onFile.status == 0, "\(onFile.errors)")
            #expect(onServer.output.contains("places from \(CLI.path(file)) into postgres://vicinity@"))
            outcomes.append(onServer)
        }
        let again = try await CLI.run(["import", "places", CLI.path("Data/csulb-buildings.csv"), "--db", url])
        #expect(again.output.contains("0 new, 0 updated, 91 unchanged"))
        outcomes.append(again)
        for (lat, lon) in [("33.779842", "-118.112526"), ("13.746549", "100.492766"), ("0", "179.99")] {
            for command in [["closest", "--json"], ["nearby", "--json", "--radius", "2000"], ["closest", "--category", "buddhist_temple", "--json"]] {
                let arguments = command + ["--lat", lat, "--lon", lon]
                let onServer = try await CLI.run(arguments + ["--db", url])
                let onFile = try await CLI.run(arguments + ["--db", scratch.database])
                #expect(onServer.status == onFile.status)
                #expect(onServer.output == onFile.output, "\(arguments)")
                outcomes.append(onServer)
            }
        }
        #expect(outcomes.allSatisfy { !$0.output.contains(secret) && !$0.errors.contains(secret) })
    }

    @Test("a server URL without a user, or with an option the service does not read, is a usage error that says so")
    func badURLs() async throws {
        let noUser = try await CLI.run(["closest", "--lat", "0", "--lon", "0", "--db", "postgres://localhost/vicinity"])
        #expect(noUser.status == 64)
        #expect(noUser.errors.contains("names no user"))
        let unknown = try await CLI.run(["closest", "--lat", "0", "--lon", "0", "--db", "postgres://ana:secret@localhost/v?colour=blue"])
        #expect(unknown.status == 64)
        #expect(unknown.errors.contains("colour is not an option"))
        #expect(!unknown.errors.contains("secret"))
    }

    @Test("serve refuses SpatiaLite's tuning options when --db names a server")
    func sqliteOptionsRefused() async throws {
        for option in ["--db-readers", "--db-cache-mib", "--db-mmap-mib"] {
            let outcome = try await CLI.run(["serve", "--db", "postgres://vicinity@127.0.0.1:1/vicinity", option, "4"])
            #expect(outcome.status == 64)
            #expect(outcome.errors.contains("\(option) tunes a SpatiaLite file"))
        }
    }

    @Test("a server nobody answers on is reported unavailable within seconds, not waited for", .timeLimit(.minutes(1)))
    func unreachableServer() async throws {
        // Port 1 on loopback: refused at once, as a stopped PostgreSQL is.
        let outcome = try await CLI.run(["closest", "--lat", "0", "--lon", "0", "--db", "postgres://vicinity@127.0.0.1:1/vicinity?sslmode=disable"])
        #expect(outcome.status == 1)
        #expect(outcome.errors.contains("the database is unavailable"))
    }
}

@Suite("vicinity copy")
struct CopyCommandTests {
    @Test("copy moves a file's record into another, reports every table the same, and refuses a target that is not empty")
    func copyBetweenFiles() async throws {
        let scratch = try Scratch()
        let source = scratch.database, target = scratch.folder.appendingPathComponent("copy.sqlite").path
        #expect(try await CLI.run(["import", "places", CLI.path("Data/bangkok-temples.csv"), "--db", source]).status == 0)
        let copied = try await CLI.run(["copy", "--from", source, "--to", target])
        #expect(copied.status == 0, "\(copied.errors)")
        #expect(copied.output.contains("places                  15 rows"))
        #expect(copied.output.components(separatedBy: "  same").count - 1 == 17, "sixteen tables (push preferences the last) and the event numbering: \(copied.output)")
        #expect(!copied.output.contains("DIFFERENT"))
        let closest = ["closest", "--lat", "13.746549", "--lon", "100.492766", "--json"]
        #expect(try await CLI.run(closest + ["--db", target]).output == (try await CLI.run(closest + ["--db", source]).output))

        let again = try await CLI.run(["copy", "--from", source, "--to", target])
        #expect(again.status == 1)
        #expect(again.errors.contains("is not empty, nothing copied; give --replace"))
        #expect(try await CLI.run(["copy", "--from", source, "--to", target, "--replace"]).status == 0)
        #expect(try await CLI.run(["copy", "--from", source, "--to", source]).status == 64)
    }
}
