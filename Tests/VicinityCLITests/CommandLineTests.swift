import Foundation
import ProcessTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `vicinity` executable as data staff and operators run it: exit statuses, messages, files on disk.
///
/// The binary is the one `swift build --build-tests` puts beside the test bundle; the inputs are the files the
/// repository ships (`Data/`) and the import fixtures, found from this file's own path.
enum CLI {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let executable: URL? = {
        let folder = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])).deletingLastPathComponent()
        let binary = folder.appendingPathComponent("vicinity")
        return FileManager.default.isExecutableFile(atPath: binary.path) ? binary : nil
    }()

    struct Outcome {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs `vicinity` with the arguments to completion, in an environment without `VICINITY_*` settings but
    /// those given. Output goes to files rather than pipes, so that a chatty process can never block on a full pipe.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Outcome {
        let process = try makeProcess(arguments, environment: environment)
        return try await offThePool { try finish(process) }
    }

    /// Waits for the process with its output in files: the blocking half of `run`.
    private static func finish(_ process: Process) throws -> Outcome {
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-cli-\(UUID().uuidString)")
        let outputURL = capture.appendingPathExtension("out"), errorsURL = capture.appendingPathExtension("err")
        defer { for url in [outputURL, errorsURL] { try? FileManager.default.removeItem(at: url) } }
        for url in [outputURL, errorsURL] { _ = FileManager.default.createFile(atPath: url.path, contents: nil) }
        let output = try FileHandle(forWritingTo: outputURL), errors = try FileHandle(forWritingTo: errorsURL)
        process.standardOutput = output
        process.standardError = errors
        try ChildProcesses.launch(process)
        process.waitUntilExit()
        try output.close()
        try errors.close()
        return Outcome(
            status: process.terminationStatus,
            output: try String(contentsOf: outputURL, encoding: .utf8),
            errors: try String(contentsOf: errorsURL, encoding: .utf8))
    }

    static func makeProcess(_ arguments: [String], environment: [String: String] = [:]) throws -> Process {
        let binary = try #require(executable, "build the executable first: swift build --build-tests")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("VICINITY_") }
            .merging(environment) { _, given in given }
        process.standardInput = FileHandle.nullDevice
        return process
    }

    static func path(_ relative: String) -> String { repository.appendingPathComponent(relative).path }

    /// Starts the server and returns the first line it writes on standard output; its log goes to `errors`
    /// (a file, which never blocks the server as a full pipe would), else nowhere.
    static func startUpLine(of server: Process, errors: FileHandle? = nil) async throws -> String {
        let output = ChildProcesses.pipe()
        server.standardOutput = output
        server.standardError = errors ?? FileHandle.nullDevice
        try ChildProcesses.launch(server)
        let handle = output.fileHandleForReading
        return String(decoding: try await offThePool { try readLine(from: handle) }, as: UTF8.self)
    }

    struct Ended: Error, CustomStringConvertible {
        var description: String { "the process closed its output before a full line" }
    }

    /// Reads one line from a pipe, byte by byte (the server keeps the pipe open).
    static func readLine(from handle: FileHandle) throws -> Data {
        var line = Data()
        while true {
            guard let byte = try handle.read(upToCount: 1), !byte.isEmpty else { throw Ended() }
            if byte == Data("\n".utf8) { return line }
            line.append(byte)
        }
    }

    /// Reads lines from a pipe until one satisfies `wanted`, and returns it: for a line a server logs once what a
    /// test waits for has happened.
    static func line(from handle: FileHandle, where wanted: (String) -> Bool) throws -> String {
        while true {
            let line = String(decoding: try readLine(from: handle), as: UTF8.self)
            if wanted(line) { return line }
        }
    }

    /// Runs blocking work (waiting for a process, reading its pipe) on a thread of its own: Swift's concurrency
    /// runs every test on as many threads as there are cores, two here, and a test blocking one of them stalls
    /// the others' servers and clients.
    static func offThePool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}

/// A temporary folder for a test's database and files, removed afterwards.
final class Scratch {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-cli-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: folder) }

    var database: String { folder.appendingPathComponent("test.sqlite").path }

    func file(_ name: String, _ contents: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// The names of the files in the folder.
    var contents: Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
    }
}

@Suite("The vicinity command line")
struct CommandLineTests {
    @Test("importing the shipped buildings loads every row, and importing them again changes nothing")
    func importTwice() async throws {
        let scratch = try Scratch()
        let buildings = CLI.path("Data/csulb-buildings.csv")
        let first = try await CLI.run(["import", "places", buildings, "--db", scratch.database])
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.contains("imported 91 places"))
        #expect(first.output.contains("91 new, 0 updated, 0 unchanged"))
        // The store is closed on the way out: the write-ahead log is folded into the file and removed.
        #expect(scratch.contents == ["test.sqlite"])

        let second = try await CLI.run(["import", "places", buildings, "--db", scratch.database])
        #expect(second.status == 0, "\(second.errors)")
        #expect(second.output.contains("0 new, 0 updated, 91 unchanged"))
    }

    @Test("a file with bad rows is refused whole with status 65, every bad row named by line, the database unchanged")
    func badFileChangesNothing() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/csulb-buildings.csv"), "--db", scratch.database]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: scratch.database))

        // Real rows of Data/csulb-buildings.csv: one good and new-named, four broken on purpose.
        let bad = try scratch.file("bad.csv", """
            id,name,category,lat,lon
            csulb-anac,Alumni Center (renamed),administrative,33.781891,-118.116859
            csulb-as,Academic Services,administrative,91.5,-118.114067
            csulb-ad,,administrative,33.776985,-118.114067
            csulb-bh,Brotman Hall,administrative,33.783249,east
            csulb-anac,Anna W. Ngai Alumni Center,administrative,33.781891,-118.116859

            """)
        let outcome = try await CLI.run(["import", "places", bad, "--db", scratch.database])
        #expect(outcome.status == 65)
        #expect(outcome.output.isEmpty)
        for line in ["line 3: latitude 91.5 is outside [-90, 90]", "line 4: name: must not be empty",
                     "line 5: lon: \"east\" is not a number", "line 6: id \"csulb-anac\" repeats line 2"] {
            #expect(outcome.errors.contains(line), "missing \(line) in:\n\(outcome.errors)")
        }
        #expect(outcome.errors.contains("not imported, nothing changed"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.database)) == before)
        let closest = try await CLI.run(["closest", "--lat", "33.781891", "--lon", "-118.116859", "--db", scratch.database])
        #expect(closest.output.hasPrefix("Around Anna W. Ngai Alumni Center\n"))
    }

    @Test("a GeoJSON file in UTM metres is refused as projected coordinates, with a hint to reproject")
    func projectedFileRefused() async throws {
        let scratch = try Scratch()
        let outcome = try await CLI.run([
            "import", "places", CLI.path("Tests/VicinityImportTests/Fixtures/nakhon-pathom-landmarks-utm47n.geojson"),
            "--category", "landmark", "--db", scratch.database,
        ])
        #expect(outcome.status == 65)
        #expect(outcome.errors.contains("look like projected metres"))
        #expect(outcome.errors.contains("EPSG:4326"))
        #expect(!scratch.contents.contains("test.sqlite"), "nothing is opened or created for a refused file")
    }

    @Test("a dry run reports what would change and writes nothing")
    func dryRun() async throws {
        let scratch = try Scratch()
        let outcome = try await CLI.run(["import", "places", CLI.path("Data/bangkok-temples.csv"), "--dry-run", "--db", scratch.database])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.output.hasPrefix("would import 15 places"))
        #expect(outcome.output.contains("15 new, 0 updated, 0 unchanged"))
        let closest = try await CLI.run(["closest", "--lat", "13.746549", "--lon", "100.492766", "--db", scratch.database])
        #expect(closest.status == 1)
        #expect(closest.errors.contains("holds no places"))
    }

    @Test("closest prints the label and a table; nearby --json uses the HTTP contract's names, nearest first")
    func queries() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/csulb-buildings.csv"), "--db", scratch.database]).status == 0)

        let closest = try await CLI.run(["closest", "--lat", "33.779842", "--lon", "-118.112526", "--db", scratch.database])
        #expect(closest.status == 0)
        #expect(closest.output.split(separator: "\n").first == "Around Hall of Science")
        #expect(closest.output.contains("csulb-hsci"))

        let nearby = try await CLI.run([
            "nearby", "--lat", "33.779842", "--lon", "-118.112526", "--radius", "150", "--limit", "3", "--json",
            "--db", scratch.database,
        ])
        #expect(nearby.status == 0, "\(nearby.errors)")
        struct Body: Decodable {
            struct Hit: Decodable { let id: String, distance_m: Double, bearing_deg: Double, lat: Double, lon: Double }
            let places: [Hit]
        }
        let body = try JSONDecoder().decode(Body.self, from: Data(nearby.output.utf8))
        #expect(body.places.count == 3)
        #expect(body.places.first?.id == "csulb-hsci")
        #expect(body.places.first?.distance_m == 0)
        #expect(body.places.map(\.distance_m) == body.places.map(\.distance_m).sorted())
        #expect(body.places.allSatisfy { $0.distance_m <= 150 })
    }

    @Test("table columns line up on a terminal when names are in Thai or Chinese")
    func tableColumnsAlign() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/bangkok-temples.csv"), "--db", scratch.database]).status == 0)
        // At Wat Pho, Bangkok: the five nearest include a Thai name with vowel marks and one with Chinese characters.
        let table = try await CLI.run(["nearby", "--lat", "13.746549", "--lon", "100.492766", "--limit", "5", "--db", scratch.database])
        #expect(table.status == 0)
        let lines = table.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 6)
        #expect(lines.contains { $0.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) } })
        /// Terminal columns before the category: a character (Thai letters with their marks are one) takes one,
        /// a CJK ideograph two.
        func categoryColumn(_ line: String) throws -> Int {
            let range = try #require(line.range(of: "buddhist_temple") ?? line.range(of: "shrine") ?? line.range(of: "category"))
            return line[..<range.lowerBound].reduce(0) { total, character in
                total + ((0x4E00...0x9FFF).contains(character.unicodeScalars.first?.value ?? 0) ? 2 : 1)
            }
        }
        let columns = try lines.map(categoryColumn)
        #expect(Set(columns).count == 1, "category starts at columns \(columns)")
    }

    @Test("coordinates off the globe and radii out of range are usage errors (status 64) that say what is wrong")
    func badArguments() async throws {
        let scratch = try Scratch()
        let latitude = try await CLI.run(["nearby", "--lat", "91", "--lon", "0", "--db", scratch.database])
        #expect(latitude.status == 64)
        #expect(latitude.errors.contains("latitude 91.0 is outside [-90, 90]"))
        let radius = try await CLI.run(["nearby", "--lat", "0", "--lon", "0", "--radius", "60000", "--db", scratch.database])
        #expect(radius.status == 64)
        #expect(radius.errors.contains("radius: must be a number of metres in (0, 50000]"))
        #expect(scratch.contents.isEmpty, "a refused command opens no database")
    }

    @Test("serve refuses a bcrypt cost under 10, malformed durations, proxies that are not IP addresses and database settings out of range (status 64)")
    func badServeOptions() async throws {
        let scratch = try Scratch()
        let shortSecret = try scratch.file("short.key", String(repeating: "k", count: 31))
        for (arguments, message) in [
            (["--limits-key-file", shortSecret], "--limits-key-file (or VICINITY_LIMITS_KEY_FILE) names a file too short: must be at least 32 bytes; it has 31"),
            (["--limits-key-file", "/nonexistent/limits.key"], "--limits-key-file (or VICINITY_LIMITS_KEY_FILE) names a file that cannot be read"),
            (["--bcrypt-cost", "9"], "--bcrypt-cost (or VICINITY_BCRYPT_COST) must be an integer in [10, 31], not \"9\""),
            (["--position-max-age", "24x"], "--position-max-age (or VICINITY_POSITION_MAX_AGE) must be a positive whole number"),
            (["--session-lifetime", "0d"], "--session-lifetime (or VICINITY_SESSION_LIFETIME) must be a positive whole number"),
            (["--trusted-proxy", "proxy.campus.edu"], "--trusted-proxy (or VICINITY_TRUSTED_PROXIES) must be an IP address"),
            (["--db-readers", "0"], "--db-readers (or VICINITY_DB_READERS): readers must be 1...64, not 0"),
            (["--db-cache-mib", "0"], "--db-cache-mib (or VICINITY_DB_CACHE_MIB): the page cache must be 1...4096 MiB, not 0"),
            (["--db-mmap-mib", "4096"], "--db-mmap-mib (or VICINITY_DB_MMAP_MIB): the memory map must be 0...2047 MiB, not 4096"),
            (["--request-timeout", "0s"], "--request-timeout (or VICINITY_REQUEST_TIMEOUT) must be a positive whole number"),
            (["--max-connections", "10"], "--max-connections (or VICINITY_MAX_CONNECTIONS) must be at least 64, not 10"),
            (["--max-connections-per-client", "0"], "--max-connections-per-client (or VICINITY_MAX_CONNECTIONS_PER_CLIENT) must be at least 1, not 0"),
            (["--ipv6-prefix", "16"], "--ipv6-prefix (or VICINITY_IPV6_PREFIX) must be a whole number of bits in [32, 128], not 16"),
        ] {
            let outcome = try await CLI.run(["serve", "--port", "0", "--db", scratch.database] + arguments)
            #expect(outcome.status == 64, "\(arguments)")
            #expect(outcome.errors.contains(message), "\(outcome.errors)")
        }
        #expect(scratch.contents == ["short.key"], "a refused command opens no database")
    }

    @Test("serve refuses a bad value from the environment as it does on the command line, naming the flag and the variable (status 64)",
          .timeLimit(.minutes(1)))
    func badServeEnvironment() async throws {
        let scratch = try Scratch()
        for (environment, message) in [
            (["VICINITY_PORT": "http"], "--port (or VICINITY_PORT) must be a whole number, not \"http\""),
            (["VICINITY_BCRYPT_COST": "9"], "--bcrypt-cost (or VICINITY_BCRYPT_COST) must be an integer in [10, 31], not \"9\""),
            (["VICINITY_VOTE_SETTLING_TIME": "soon"], "--vote-settling-time (or VICINITY_VOTE_SETTLING_TIME) must be a positive whole number"),
            (["VICINITY_TRUSTED_PROXIES": "10.0.0.1, proxy.campus.edu"], "--trusted-proxy (or VICINITY_TRUSTED_PROXIES) must be an IP address, not \"proxy.campus.edu\""),
            (["VICINITY_DB_READERS": "0"], "--db-readers (or VICINITY_DB_READERS): readers must be 1...64, not 0"),
            (["VICINITY_LOG_LEVEL": "loud"], "--log-level (or VICINITY_LOG_LEVEL) must be trace, debug, info, notice, warning, error or critical, not \"loud\""),
            (["VICINITY_MAP_ATTRIBUTION": "© OpenStreetMap contributors"], "--map-attribution (or VICINITY_MAP_ATTRIBUTION) goes with --map-tiles, which is not given"),
        ] {
            // The command line would win over VICINITY_PORT.
            let port = environment["VICINITY_PORT"] == nil ? ["--port", "0"] : []
            let outcome = try await CLI.run(["serve", "--db", scratch.database] + port, environment: environment)
            #expect(outcome.status == 64, "\(environment)")
            #expect(outcome.errors.contains(message), "\(outcome.errors)")
        }
        let database = try await CLI.run(["serve", "--port", "0"], environment: ["VICINITY_DB": ""])
        #expect(database.status == 64)
        #expect(database.errors.contains("--db (or VICINITY_DB): the database path is empty"), "\(database.errors)")
        #expect(scratch.contents.isEmpty, "a refused command opens no database")
    }

    @Test("a serve setting comes from the command line, else from its environment variable, else from its default",
          .timeLimit(.minutes(1)))
    func settingPrecedence() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/bangkok-temples.csv"), "--db", scratch.database]).status == 0)
        let variables = ["VICINITY_TEMPLE_CATEGORIES": "shrine", "VICINITY_MAX_CONNECTIONS_PER_CLIENT": "100"]
        for (arguments, environment, expected) in [
            ([String](), [String: String](), ["temples: buddhist_temple, shrine;", ", 256 per client,"]),
            ([], variables, ["temples: shrine;", ", 100 per client,"]),
            (["--max-connections-per-client", "50"], variables, ["temples: shrine;", ", 50 per client,"]),
        ] {
            let server = try CLI.makeProcess(
                ["serve", "--port", "0", "--db", scratch.database, "--log-level", "warning"] + arguments, environment: environment)
            defer { if server.isRunning { server.terminate() } }
            let line = try await CLI.startUpLine(of: server)
            for text in expected { #expect(line.contains(text), "\(arguments) \(environment): \(line)") }
            server.terminate()
            server.waitUntilExit()
        }
    }

    @Test("serve's help gives each option's environment variable and lists them all with the rule that the command line wins")
    func serveHelp() async throws {
        let help = try await CLI.run(["serve", "--help"])
        #expect(help.status == 0)
        let text = help.output.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        let rule = "A command-line option wins over the environment, and either over the default."
        #expect(text.contains(rule))
        /// The `VICINITY_*` names in `text`.
        func variables(_ text: Substring) -> [String] {
            text.split { (character: Character) in !(character.isUppercase || character.isNumber || character == "_") }
                .map(String.init).filter { $0.hasPrefix("VICINITY_") }
        }
        let listed = try #require(text.range(of: "Every option may also come from the environment:")).upperBound
        let listedVariables = variables(text[listed..<(try #require(text.range(of: rule)).lowerBound)])
        let optionDefaults = text.components(separatedBy: "Default: $").dropFirst().compactMap { variables(Substring($0)).first }
        let options = help.output.split(separator: "\n").filter { $0.hasPrefix("  --") && !$0.hasPrefix("  --help") && !$0.hasPrefix("  --version") }
        #expect(listedVariables == optionDefaults, "the list in the discussion and the options' defaults")
        #expect(optionDefaults.count == options.count, "an option without a variable in:\n\(help.output)")
        #expect(Set(listedVariables).count == listedVariables.count)
        #expect(listedVariables.contains("VICINITY_VOTE_SETTLING_TIME"))
    }

    @Test("serve announces the port it bound, answers, refuses a taken port, and stops cleanly on SIGTERM",
          .timeLimit(.minutes(1)))
    func serveLifecycle() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/bangkok-temples.csv"), "--db", scratch.database]).status == 0)

        let server = try CLI.makeProcess(["serve", "--port", "0", "--db", scratch.database, "--log-level", "warning"])
        defer { if server.isRunning { server.terminate() } }

        // The start-up line comes only once the socket is bound, and names the real port.
        let line = try await CLI.startUpLine(of: server)
        #expect(line.hasPrefix("Vicinity serving http://127.0.0.1:"))
        #expect(line.contains("(15 places, 0 positions and 0 alerts in memory, loaded in "))
        #expect(line.contains(" ms; 0 users; temples: buddhist_temple, shrine; up to "))
        let address = try #require(line.split(separator: " ").dropFirst(2).first.map(String.init))
        let port = try #require(URL(string: address)?.port)
        #expect(port > 0)

        let (body, response) = try await URLSession.shared.data(from: try #require(URL(string: "\(address)/health")))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self) == #"{"places":15,"status":"ok"}"#)

        let second = try await CLI.run(["serve", "--port", String(port), "--db", scratch.database])
        #expect(second.status == 1)
        #expect(second.errors.contains("cannot listen on 127.0.0.1:\(port)"))
        #expect(!second.output.contains("Vicinity serving"))

        server.terminate()  // SIGTERM
        server.waitUntilExit()
        #expect(server.terminationReason == .exit)
        #expect(server.terminationStatus == 0)
    }

    @Test("serve raises its descriptor limit to the hard one, keeps its connection cap well under it, and refuses a limit too low for a cap",
          .timeLimit(.minutes(1)))
    func descriptorLimit() async throws {
        let scratch = try Scratch()
        /// `vicinity serve` under the given hard and soft descriptor limits, through the shell's ulimit.
        func serve(hard: Int, soft: Int, _ arguments: [String]) throws -> Process {
            let process = try CLI.makeProcess(["serve", "--port", "0", "--db", scratch.database] + arguments)
            let binary = try #require(process.executableURL).path
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -Sn \(soft) && ulimit -Hn \(hard) && exec \"$0\" \"$@\"", binary] + (process.arguments ?? [])
            return process
        }

        let server = try serve(hard: 4096, soft: 1024, ["--log-level", "warning"])
        defer { if server.isRunning { server.terminate() } }
        let line = try await CLI.startUpLine(of: server)
        // 4,096 less a quarter kept back for the database, the event loops and refusals being answered.
        #expect(line.contains("up to 3072 connections, 256 per client, under a descriptor limit of 4096)"), "\(line)")
        server.terminate()
        server.waitUntilExit()

        for (hard, arguments, message) in [
            (512, [String](), "the descriptor limit (ulimit -n) of 512 leaves room for fewer than 64 connections"),
            (4096, ["--max-connections", "5000"], "--max-connections (or VICINITY_MAX_CONNECTIONS) 5000 does not fit under the descriptor limit of 4096, which leaves room for 3072"),
        ] {
            let refused = try serve(hard: hard, soft: hard, arguments)
            let errors = ChildProcesses.pipe()
            refused.standardOutput = FileHandle.nullDevice
            refused.standardError = errors
            try ChildProcesses.launch(refused)
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            refused.waitUntilExit()
            #expect(refused.terminationStatus != 0)
            #expect(text.contains(message), "\(text)")
        }
    }
}
