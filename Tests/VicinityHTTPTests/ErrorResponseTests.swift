import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import VicinityCore
import VicinityHTTP

@Suite("Errors as problem+json")
struct ErrorResponseTests {
    @Test("invalid input is a 400 problem whose errors name every bad field")
    func everyBadField() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/places/nearby?lat=91&lon=east&radius=0&category=!!!&limit=501", method: .get)
            #expect(response.status == .badRequest)
            #expect(response.headers[.contentType] == "application/problem+json")
            let problem: ProblemWire = try response.decoded()
            #expect(problem.type == "about:blank")
            #expect(problem.title == "Bad Request")
            #expect(problem.status == 400)
            #expect(problem.fields == ["lat", "lon", "radius", "category", "limit"])
            #expect(problem.detail.contains("lat"))
            #expect(problem.errors?.first?.message == CoordinateError.latitudeOutOfRange(91).description)
        }
    }

    @Test("missing required parameters are each reported as required")
    func missingParameters() async throws {
        try await withApp(InMemoryStore()) { client in
            for path in ["/v1/places/nearby", "/v1/places/closest", "/v1/temples/recommended"] {
                let problem: ProblemWire = try await client.execute(uri: path, method: .get).decoded()
                #expect(problem.status == 400, "\(path)")
                #expect(problem.errors == [
                    .init(field: "lat", message: "is required"), .init(field: "lon", message: "is required"),
                ], "\(path)")
            }
            let search: ProblemWire = try await client.execute(uri: "/v1/places?q=", method: .get).decoded()
            #expect(search.errors == [.init(field: "q", message: "is required")])
        }
    }

    @Test("numbers that are not finite decimals and limits that are not integers are refused")
    func nonDecimalNumbers() async throws {
        try await withApp(InMemoryStore()) { client in
            let problem: ProblemWire = try await client.execute(
                uri: "/v1/places/nearby?lat=NaN&lon=1e400&radius=inf&limit=2.5", method: .get
            ).decoded()
            #expect(problem.fields == ["lat", "lon", "radius", "limit"])
            #expect(problem.errors?[1].message == CoordinateError.longitudeNotFinite.description)
        }
    }

    @Test("a search term is at most 200 code points, as the OpenAPI document counts, combining marks included")
    func searchTermLength() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            let longest = try await client.execute(uri: "/v1/places?q=" + String(repeating: "a", count: 200), method: .get)
            #expect(longest.status == .ok)
            // 150 letters each with a combining acute accent: 150 characters on screen, 300 code points.
            let accented = String(repeating: "e%CC%81", count: 150)
            let problem: ProblemWire = try await client.execute(uri: "/v1/places?q=" + accented, method: .get).decoded()
            #expect(problem.status == 400)
            #expect(problem.errors == [.init(field: "q", message: "must be at most 200 characters")])
        }
    }

    @Test("unknown, repeated and badly encoded parameters are refused rather than ignored")
    func unknownAndRepeatedParameters() async throws {
        try await withApp(InMemoryStore()) { client in
            let problem: ProblemWire = try await client.execute(
                uri: "/v1/places/nearby?lat=33.779842&lat=13.746549&lon=-118.112526&radious=500&limit=%FF", method: .get
            ).decoded()
            #expect(problem.errors == [
                .init(field: "limit", message: "is not valid percent-encoded UTF-8"),
                .init(field: "lat", message: "must be given at most once"),
                .init(field: "radious", message: "is not a parameter of this endpoint"),
            ])

            // A required parameter that cannot be decoded is reported once, not also as missing.
            let undecodable: ProblemWire = try await client.execute(
                uri: "/v1/places/closest?lat=%FF&lon=-118.112526", method: .get
            ).decoded()
            #expect(undecodable.errors == [.init(field: "lat", message: "is not valid percent-encoded UTF-8")])
        }
    }

    @Test("an unknown route is a 404 problem")
    func unknownRoute() async throws {
        try await withApp(InMemoryStore()) { client in
            for uri in ["/v1/nowhere", "/index.html", "/v1/places/csulb-hsci/extra"] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .notFound, "\(uri)")
                #expect(response.headers[.contentType] == "application/problem+json")
                let problem: ProblemWire = try response.decoded()
                #expect(problem.status == 404)
                #expect(problem.title == "Not Found")
            }
            let post = try await client.execute(uri: "/v1/nowhere", method: .post)
            #expect(post.status == .notFound)
        }
    }

    @Test("a wrong method on a known path is a 405 problem with an Allow header")
    func wrongMethod() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            for (method, uri) in [(HTTPRequest.Method.post, "/v1/places/nearby"), (.delete, "/v1/places/csulb-hsci"),
                                  (.put, "/health"), (.post, "/v1/places")] {
                let response = try await client.execute(uri: uri, method: method)
                #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                #expect(response.headers[.allow] == "GET, HEAD")
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(try response.decoded(as: ProblemWire.self).status == 405)
            }
        }
    }

    @Test("a request body over 64 KiB is a 413 problem; a small one is ignored")
    func bodyTooLarge() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            let large = try await client.execute(
                uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526", method: .get,
                body: ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 * 1024 + 1))
            #expect(large.status == .contentTooLarge)
            #expect(large.headers[.contentType] == "application/problem+json")
            #expect(try large.decoded(as: ProblemWire.self).status == 413)

            let small = try await client.execute(
                uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526", method: .get,
                body: ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 * 1024))
            #expect(small.status == .ok)
        }
    }

    @Test("a path and query string over 8 KiB is a 414 problem")
    func uriTooLong() async throws {
        try await withApp(InMemoryStore()) { client in
            let padding = String(repeating: "a", count: 8 * 1024)
            let response = try await client.execute(uri: "/v1/places?q=" + padding, method: .get)
            #expect(response.status == .uriTooLong)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(try response.decoded(as: ProblemWire.self).status == 414)
        }
    }

    @Test("a failing store is a 500 problem with a generic detail; the cause is only in the server log")
    func unexpectedErrorIsGeneric() async throws {
        let logs = LogRecorder()
        try await withApp(places: FailingStore(), campuses: FailingStore(), logs: logs) { client in
            let response = try await client.execute(uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526", method: .get)
            #expect(response.status == .internalServerError)
            #expect(response.headers[.contentType] == "application/problem+json")
            let problem: ProblemWire = try response.decoded()
            #expect(problem.status == 500)
            #expect(!response.text.contains("secret"))
            #expect(!response.text.contains("FailingStore"))
        }
        #expect(logs.records.contains { $0.level == .error && ($0.metadata["error"] ?? "").contains("secret.sqlite") })
    }

    @Test("no malformed input produces a 500 on any endpoint")
    func noInputGivesServerError() async throws {
        let store = try await store(csulbRows, bangkokRows)
        let hostile = [
            "lat=%00&lon=%", "lat=-0&lon=-0", "lat=1e-400&lon=+1", "lat=--1&lon=1..2", "lat=%E2%82%AC&lon=%C3",
            "q=%F0%9F%98%80", "category=%2C%2C&lat=0&lon=0", "limit=-1&radius=-5", "limit=99999999999999999999",
            "radius=1e308&lat=90&lon=180", "from=,&to=1,2,3", "from=90,180&to=-90,-180&method=geodesic", "=&&=x&",
            "q=" + String(repeating: "é", count: 300), "method=&from=0,0&to=0,0", "q=sci%00ence",
        ]
        let paths = routeTable(services: services(store), metrics: sharedRegistry).operations
            .filter { $0.method == .get && $0.access == .anyone }
            .map { $0.path.replacingOccurrences(of: "{id}", with: "%ZZ") }
        try await withApp(store) { client in
            for path in paths {
                for query in hostile {
                    let response = try await client.execute(uri: path + "?" + query, method: .get)
                    #expect(response.status.code < 500, "\(path)?\(query) gave \(response.status)")
                }
            }
        }
    }
}
