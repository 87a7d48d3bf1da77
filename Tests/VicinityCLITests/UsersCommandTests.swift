import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `vicinity users` beside a serving front on the same SpatiaLite file: what the operator changes, the
/// front enforces on its next request.
@Suite("vicinity users")
struct UsersCommandTests {
    /// A front serving the scratch database, and the HTTP calls the test makes to it.
    private struct Front {
        let process: Process
        let address: String

        init(database: String) async throws {
            process = try CLI.makeProcess(["serve", "--port", "0", "--db", database, "--log-level", "warning", "--bcrypt-cost", "10"])
            let line = try await CLI.startUpLine(of: process)
            address = try #require(line.split(separator: " ").dropFirst(2).first.map(String.init), "\(line)")
        }

        func call(_ method: String, _ path: String, token: String? = nil, json: String? = nil) async throws -> (status: Int, body: [String: Any]) {
            var request = URLRequest(url: try #require(URL(string: address + path)))
            request.httpMethod = method
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            if let json {
                request.httpBody = Data(json.utf8)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            let (data, response) = try await URLSession.shared.data(for: request)
            let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
        }

        func signUp(_ username: String) async throws {
            let made = try await call("POST", "/v1/users", json: """
                {"username":"\(username)","password":"a long enough passphrase","first_name":"\(username.capitalized)","last_name":"Test"}
                """)
            #expect(made.status == 201)
        }

        func signIn(_ username: String) async throws -> (status: Int, token: String?) {
            let answer = try await call("POST", "/v1/sessions", json: #"{"username":"\#(username)","password":"a long enough passphrase"}"#)
            return (answer.status, answer.body["token"] as? String)
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    @Test("an operator lists and shows accounts, disables one (its session ends at once on the serving front), enables it again, and deletes it only with --yes",
          .timeLimit(.minutes(5)))
    func operatorLife() async throws {
        let scratch = try Scratch()
        let front = try await Front(database: scratch.database)
        defer { front.stop() }
        try await front.signUp("alice")
        try await front.signUp("bob")
        let token = try #require(try await front.signIn("alice").token)
        let db = ["--db", scratch.database]

        let list = try await CLI.run(["users", "list"] + db)
        #expect(list.status == 0, "\(list.errors)")
        let lines = list.output.split(separator: "\n")
        #expect(lines.count == 3 && lines[0].hasPrefix("username") && lines[1].hasPrefix("alice ") && lines[2].hasPrefix("bob "), "\(list.output)")
        let matched = try await CLI.run(["users", "list", "--match", "BO", "--json"] + db)
        let matches = try #require(try JSONSerialization.jsonObject(with: Data(matched.output.utf8)) as? [[String: Any]])
        #expect(matches.map { $0["username"] as? String } == ["bob"] && matches.first?["disabled"] as? Bool == false)

        let disabled = try await CLI.run(["users", "disable", "ALICE"] + db)
        #expect(disabled.status == 0 && disabled.output.contains("disabled alice"), "\(disabled.errors)")
        #expect(try await front.call("GET", "/v1/me", token: token).status == 401, "the session ended")
        #expect(try await front.signIn("alice").status == 403, "a disabled account cannot sign in")
        let shown = try await CLI.run(["users", "show", "alice", "--json"] + db)
        #expect(shown.output.contains(#""disabled":true"#), "\(shown.output)")

        #expect(try await CLI.run(["users", "enable", "alice"] + db).status == 0)
        let again = try await front.signIn("alice")
        #expect(again.status == 201)

        let unconfirmed = try await CLI.run(["users", "delete", "alice"] + db)
        #expect(unconfirmed.status == 1 && unconfirmed.errors.contains("--yes"))
        #expect(try await CLI.run(["users", "show", "alice"] + db).status == 0, "nothing deleted without --yes")
        let deleted = try await CLI.run(["users", "delete", "alice", "--yes"] + db)
        #expect(deleted.status == 0, "\(deleted.errors)")
        let againToken = try #require(again.token)
        #expect(try await front.call("GET", "/v1/me", token: againToken).status == 401)
        #expect(try await front.signIn("alice").status == 401, "as for anyone unknown")

        let gone = try await CLI.run(["users", "show", "alice"] + db)
        #expect(gone.status == 67 && gone.errors.contains("no account has the username, address or id alice"), "\(gone.errors)")
        #expect(try await CLI.run(["users", "disable", "nobody"] + db).status == 67)
        #expect(try await CLI.run(["users", "list"] + db).output.split(separator: "\n").count == 2, "bob is left")
    }
}
