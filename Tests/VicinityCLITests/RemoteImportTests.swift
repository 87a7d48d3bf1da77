import Foundation
import ProcessTestSupport
import Testing

/// A local static file server (Python's http.server on 127.0.0.1, a free port) for imports from a URL.
final class FileServer {
    let process = Process()
    let port: Int

    init(serving folder: URL) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", folder.path, "0"]
        let output = ChildProcesses.pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.launch(process)
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let words = String(decoding: line, as: UTF8.self).split(separator: " ")
        guard let index = words.firstIndex(of: "port"), index + 1 < words.count, let port = Int(words[index + 1]) else {
            kill(process.processIdentifier, SIGKILL)
            throw ServerDidNotStart(output: String(decoding: line, as: UTF8.self))
        }
        self.port = port
    }

    struct ServerDidNotStart: Error { var output: String }

    /// SIGKILL: a child of the test runner may inherit a mask that blocks SIGTERM, and would outlive the test.
    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// `gzip -c`, as data staff compress an export.
func gzip(_ path: String, to destination: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["gzip", "-c", path]
    _ = FileManager.default.createFile(atPath: destination, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: destination))
    process.standardOutput = output
    try ChildProcesses.launch(process)
    process.waitUntilExit()
    try output.close()
    #expect(process.terminationStatus == 0)
}

@Suite("Imports from compressed files and URLs")
struct RemoteImportTests {
    @Test("a .csv.gz file imports as its .csv does, and a corrupt one is refused with status 65, nothing changed")
    func gzipFiles() async throws {
        let scratch = try Scratch()
        let buildings = CLI.path("Data/csulb-buildings.csv")
        let compressed = scratch.folder.appendingPathComponent("buildings.csv.gz").path
        try gzip(buildings, to: compressed)
        let first = try await CLI.run(["import", "places", compressed, "--db", scratch.database])
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.contains("91 new, 0 updated, 0 unchanged"))
        let plain = try await CLI.run(["import", "places", buildings, "--db", scratch.database])
        #expect(plain.output.contains("0 new, 0 updated, 91 unchanged"), "the same places as the plain file")

        // The compressed bytes cut short: gzip's own check fails.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: compressed))
        let cut = try scratch.file("cut.csv.gz", "")
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
        let other = try Scratch()
        let refused = try await CLI.run(["import", "places", cut, "--db", other.database])
        #expect(refused.status == 65)
        #expect(refused.errors.contains("is not a readable gzip file"), "\(refused.errors)")
        #expect(!other.contents.contains("test.sqlite"), "the database was never opened")
    }

    @Test("an http URL is downloaded and imported; a missing file, a refused connection and an ftp URL are status 66 and change nothing")
    func urls() async throws {
        let served = try Scratch()
        try gzip(CLI.path("Data/csulb-buildings.csv"), to: served.folder.appendingPathComponent("buildings.csv.gz").path)
        let server = try FileServer(serving: served.folder)
        let scratch = try Scratch()

        let imported = try await CLI.run(["import", "places", "http://127.0.0.1:\(server.port)/buildings.csv.gz", "--db", scratch.database])
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(imported.output.contains("imported 91 places"))
        #expect(imported.output.contains("91 new, 0 updated, 0 unchanged"))

        for (url, message) in [
            ("http://127.0.0.1:\(server.port)/missing.csv", "404"),
            ("http://127.0.0.1:1/buildings.csv", "cannot download"),
            ("ftp://127.0.0.1/buildings.csv", "only http and https"),
        ] {
            let failed = try await CLI.run(["import", "places", url, "--db", scratch.database])
            #expect(failed.status == 66, "\(url): \(failed.errors)")
            #expect(failed.errors.contains("nothing changed") && failed.errors.contains(message), "\(url): \(failed.errors)")
        }
        let again = try await CLI.run(["import", "places", CLI.path("Data/csulb-buildings.csv"), "--db", scratch.database])
        #expect(again.output.contains("0 new, 0 updated, 91 unchanged"), "the failed downloads changed nothing")
    }
}
