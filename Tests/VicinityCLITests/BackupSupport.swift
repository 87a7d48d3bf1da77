import Foundation
import ProcessTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `vicinity serve` on a free port over a database file; SIGKILLed if the test ends without `stop()`.
final class RunningServer {
    let process: Process
    let base: URL

    init(database: String) async throws {
        // bcrypt's lowest cost the server accepts: sign-ups and sign-ins are part of the load, not what is measured.
        process = try CLI.makeProcess(["serve", "--port", "0", "--db", database, "--log-level", "warning", "--bcrypt-cost", "10"])
        let line = try await CLI.startUpLine(of: process)
        // "Vicinity serving http://127.0.0.1:PORT (...)"
        let words = line.split(separator: " ")
        base = try #require(words.dropFirst(2).first.flatMap { URL(string: String($0)) }, "no address in \(words)")
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// SIGTERM, and waits for the graceful stop (which closes the store).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// The HTTP API as a client uses it, JSON in and out.
struct API: Sendable {
    let base: URL

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends the request and returns the status and body.
    func send(_ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: try #require(URL(string: base.absoluteString + path)))
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
        }
        let (body, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
    }

    /// Sends the request, requires `expected`, and decodes the answer.
    func call<Answer: Decodable>(
        _ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil, expect expected: Int = 200,
        as type: Answer.Type = Answer.self
    ) async throws -> Answer {
        let (status, body) = try await send(method, path, token: token, json: json)
        guard status == expected else {
            throw Failure(description: "\(method) \(path) answered \(status), not \(expected): \(String(decoding: body, as: UTF8.self))")
        }
        return try JSONDecoder().decode(Answer.self, from: body)
    }

    static let password = "backup test password"

    func signUp(_ username: String) async throws -> User {
        try await call("POST", "/v1/users", json: [
            "username": username, "password": Self.password, "first_name": "Backup", "last_name": "Test",
        ], expect: 201)
    }

    func signIn(_ username: String) async throws -> (status: Int, person: Person?) {
        let (status, body) = try await send("POST", "/v1/sessions", json: ["username": username, "password": Self.password])
        guard status == 201 else { return (status, nil) }
        let answer = try JSONDecoder().decode(SignedIn.self, from: body)
        return (status, Person(id: answer.user.id, username: answer.user.username, token: answer.token))
    }

    func signUpAndIn(_ username: String) async throws -> Person {
        _ = try await signUp(username)
        return try #require(try await signIn(username).person)
    }

    /// Makes the two friends: a request from one, accepted by the other.
    func befriend(_ one: Person, _ other: Person) async throws {
        let request: FriendRequest = try await call("POST", "/v1/friend-requests", token: one.token, json: ["to": other.id], expect: 201)
        let _: Friend = try await call("POST", "/v1/friend-requests/\(request.id)/accept", token: other.token)
    }

    struct User: Decodable, Sendable { let id: String; let username: String }
    struct SignedIn: Decodable { let token: String; let user: User }
    struct FriendRequest: Decodable { let id: String }
    struct People: Decodable { let users: [User] }
    struct Friends: Decodable { let friends: [Friend] }
    struct Friend: Decodable, Sendable { let id: String; let status: String?; let updated_at: String? }
}

/// A signed-in person: who and their token.
struct Person: Sendable {
    let id: String
    let username: String
    let token: String
}

/// One's own position as the API answers it, less `presence`, which depends on when it is asked.
struct OwnPosition: Decodable, Equatable, Sendable {
    let lat: Double
    let lon: Double
    let status: String?
    let label: String
    let on_campus: Bool?
    let updated_at: String
}

/// Rows of a SQLite file read by SQLite alone (Python's sqlite3 module: no SpatiaLite, none of this program), so
/// that a file's soundness is judged by something other than the code that made it.
enum SQLiteProbe {
    static func rows(_ path: String, _ sql: String) throws -> [[String?]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import json, sqlite3, sys
            connection = sqlite3.connect(sys.argv[1])
            rows = connection.execute(sys.argv[2]).fetchall()
            connection.commit()
            print(json.dumps([[None if value is None else str(value) for value in row] for row in rows]))
            """, path, sql]
        let output = ChildProcesses.pipe()
        process.standardOutput = output
        try ChildProcesses.launch(process)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 could not run \(sql) on \(path)")
        return try JSONDecoder().decode([[String?]].self, from: data)
    }
}

extension CLI {
    /// `run` while the test's other tasks (a writer) go on: `run` waits on a thread of its own.
    static func runAlongside(_ arguments: [String]) async throws -> Outcome {
        try await run(arguments)
    }
}

/// Flips the first byte of `count` pages in the middle of a SQLite file: each is a b-tree page's type or the
/// first byte of an overflow or free-list page's next-page pointer, so SQLite's integrity check sees every one.
func damage(_ path: String, pages count: Int, pageSize: Int = 4096) throws {
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let pages = bytes.count / pageSize
    for page in (pages / 2)..<(pages / 2 + count) { bytes[page * pageSize] ^= 0xFF }
    try bytes.write(to: URL(fileURLWithPath: path))
}
