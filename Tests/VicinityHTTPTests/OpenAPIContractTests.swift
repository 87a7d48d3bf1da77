import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

/// The operations an OpenAPI document declares, read from its `paths:` block.
///
/// A line parser is enough for the document's own layout: path keys sit two spaces in and end with `:`,
/// operations sit four spaces in under them. Anything else under a path (parameters, summary) is skipped.
enum OpenAPIPaths {
    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// Each operation's lines (its method line and everything indented under it), by "METHOD /path".
    static func blocks(in yaml: String) -> [String: String] {
        var blocks: [String: [Substring]] = [:]
        var inPaths = false
        var currentPath: String?
        var current: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == " " }.count
            let content = line.dropFirst(indent)
            if content.isEmpty || content.hasPrefix("#") {
                if let current { blocks[current, default: []].append(line) }
                continue
            }
            if indent == 0 {
                inPaths = content == "paths:"
                currentPath = nil
                current = nil
                continue
            }
            guard inPaths else { continue }
            if indent <= 4 { current = nil }
            if indent == 2, content.hasSuffix(":") {
                currentPath = String(content.dropLast()).trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
            } else if indent == 4, content.hasSuffix(":"), let currentPath, methods.contains(String(content.dropLast())) {
                current = "\(content.dropLast().uppercased()) \(currentPath)"
            }
            if let current { blocks[current, default: []].append(line) }
        }
        return blocks.mapValues { $0.joined(separator: "\n") }
    }

    static func operations(in yaml: String) -> Set<String> {
        var operations: Set<String> = []
        var inPaths = false
        var currentPath: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == " " }.count
            let content = line.dropFirst(indent)
            if content.isEmpty || content.hasPrefix("#") { continue }
            if indent == 0 {
                inPaths = content == "paths:"
                currentPath = nil
                continue
            }
            guard inPaths, content.hasSuffix(":") else { continue }
            let key = String(content.dropLast()).trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
            if indent == 2 {
                currentPath = key
            } else if indent == 4, let currentPath, methods.contains(key) {
                operations.insert("\(key.uppercased()) \(currentPath)")
            }
        }
        return operations
    }
}

@Suite("OpenAPI document and router agree")
struct OpenAPIContractTests {
    @Test("the route table, the router and openapi.yaml list the same operations, with HEAD beside every GET")
    func routerMatchesDocument() async throws {
        let services = services(InMemoryStore())
        let table = Set(routeTable(services: services, metrics: sharedRegistry).operations.map(\.description))
        let router = buildRouter(services: services, metrics: sharedRegistry)
        // HEAD is documented once for all GET operations (info.description), not per path; it is checked below.
        let routes = router.routes.map { (method: $0.method, path: $0.path.description) }
        let registered = Set(routes.filter { $0.method != .head }.map { "\($0.method.rawValue) \($0.path)" })
        let headPaths = Set(routes.filter { $0.method == .head }.map(\.path))
        let getPaths = Set(routes.filter { $0.method == .get }.map(\.path))

        let document = try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/openapi.yaml", method: .get).text
        }
        let documented = OpenAPIPaths.operations(in: document)

        #expect(registered == table)
        #expect(headPaths == getPaths)
        #expect(document.contains("Every GET operation also answers HEAD"))
        #expect(registered.subtracting(documented).isEmpty, "registered but not documented: \(registered.subtracting(documented).sorted())")
        #expect(documented.subtracting(registered).isEmpty, "documented but not registered: \(documented.subtracting(registered).sorted())")
    }

    @Test("signed-in operations declare the bearer requirement and 401; guests' do not; bodies declare 413 and 415")
    func securityIsDocumented() async throws {
        let table = routeTable(services: services(InMemoryStore()), metrics: sharedRegistry)
        let document = try await Application(router: buildRouter(services: services(InMemoryStore()), metrics: sharedRegistry))
            .test(.router) { client in try await client.execute(uri: "/openapi.yaml", method: .get).text }
        let blocks = OpenAPIPaths.blocks(in: document)
        #expect(blocks.count == table.operations.count)
        for operation in table.operations {
            let block = try #require(blocks[operation.description], "\(operation) is not documented")
            switch operation.access {
            case .signedIn:
                #expect(block.contains("security:") && block.contains("'401':"), "\(operation)")
            case .anyone:
                #expect(!block.contains("security:"), "\(operation)")
            }
            if block.contains("requestBody:") {
                #expect(block.contains("'413':"), "\(operation)")
                // The phone apps' endpoints read what the apps send whatever its type.
                if !Self.phoneOperations.contains(operation.description) { #expect(block.contains("'415':"), "\(operation)") }
            }
        }
        // The operations that read a JSON body, as the handlers do.
        let withBodies = Set(blocks.filter { $0.value.contains("requestBody:") }.keys)
        #expect(withBodies == Set<String>([
            "POST /v1/users", "POST /v1/sessions", "POST /v1/sign-in-codes", "PATCH /v1/me", "DELETE /v1/me",
            "PUT /v1/me/password", "POST /v1/me/email-verification/confirm", "PUT /v1/me/position", "POST /v1/friend-requests",
            "PATCH /v1/friends/{id}", "POST /v1/votes", "POST /v1/votes/{id}/ballots",
            "PATCH /v1/votes/{id}/ballots/{ballot_id}", "PATCH /v1/votes/{id}", "POST /v1/votes/{id}/extend",
            "POST /v1/me/devices", "POST /v1/me/push-subscriptions", "PUT /v1/me/push-preferences", "POST /v1/blocks",
            "PATCH /v1/friends", "POST /v1/alerts",
        ]).union(Self.phoneOperations.filter { $0.hasPrefix("POST") }))
    }

    /// OwnTracks' and Traccar Client's endpoints, which take the apps' own formats.
    static let phoneOperations: Set<String> = ["POST /owntracks", "POST /traccar", "GET /traccar"]

    @Test("the path parser reads operations and ignores other keys, so the contract test can fail")
    func parserReadsOperations() {
        let yaml = """
            openapi: 3.1.0
            paths:
              /v1/places/{id}:
                parameters: []
                get:
                  summary: x
                  responses:
                    '200':
                      description: ok
              '/health':
                get:
                  responses: {}
                post:
                  responses: {}
            components:
              schemas:
                get:
                  type: object
            """
        #expect(OpenAPIPaths.operations(in: yaml) == ["GET /v1/places/{id}", "GET /health", "POST /health"])
    }
}
