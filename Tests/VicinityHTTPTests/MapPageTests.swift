import Foundation
import GeoCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
@testable import VicinityHTTP
@testable import VicinityImport

/// A folder standing in for Debian's Leaflet: a script, a style sheet and one image, with known contents.
private func leafletFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("leaflet-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder.appendingPathComponent("images"), withIntermediateDirectories: true)
    try Data("/* the map library */".utf8).write(to: folder.appendingPathComponent("leaflet.js"))
    try Data(".leaflet-container {}".utf8).write(to: folder.appendingPathComponent("leaflet.css"))
    try Data([0x89, 0x50, 0x4E, 0x47]).write(to: folder.appendingPathComponent("images/layers.png"))
    return folder
}

private func options(leaflet: URL? = nil, tiles: TileLayer? = nil) -> HTTPOptions {
    var options = HTTPOptions()
    options.page = PageOptions(leafletDirectory: leaflet?.path ?? "/nonexistent/leaflet", tiles: tiles)
    return options
}

@Suite("The map page")
struct MapPageTests {
    @Test("the page is served at / as HTML with a policy that runs only this server's scripts, never inline ones")
    func pageAndPolicy() async throws {
        try await withApp(InMemoryStore(), options: options()) { client in
            let page = try await client.call(.get, "/")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.text.contains("<script type=\"module\" src=\"/app/"), "the page loads its own modules")
            #expect(!page.text.contains("<script>"), "no inline script")
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src 'self'") && policy.contains("default-src 'none'"))
            #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
            #expect(policy.contains("img-src 'self' data:;"), "no tile origin without tiles: \(policy)")
            #expect(page.headers[.xContentTypeOptions] == "nosniff")
            // A query string a link may carry does not change the page.
            #expect(try await client.call(.get, "/?from=poster").status == .ok)
        }
    }

    @Test("the page's files are served by name with their media type, and nothing outside the folder is")
    func pageFiles() async throws {
        try await withApp(InMemoryStore(), options: options()) { client in
            let script = try await client.call(.get, "/app/app.js")
            #expect(script.status == .ok)
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(try await client.call(.get, "/app/app.css").headers[.contentType] == "text/css; charset=utf-8")
            for uri in ["/app/..%2Fopenapi.yaml", "/app/.hidden.js", "/app/index", "/app/APP.JS", "/app/missing.js",
                        "/app/..", "/app/%2e%2e", "/leaflet/../index.html"] {
                let response = try await client.call(.get, uri)
                #expect(response.status == .notFound, "\(uri)")
                #expect(response.headers[.contentType] == "application/problem+json", "\(uri)")
            }
            #expect(try await client.call(.post, "/app/app.js").status == .methodNotAllowed)
        }
    }

    @Test("the service worker is served at the root, revalidated at every load, and the policy lets it run")
    func serviceWorker() async throws {
        try await withApp(InMemoryStore(), options: options()) { client in
            let worker = try await client.call(.get, "/sw.js")
            #expect(worker.status == .ok)
            #expect(worker.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(worker.headers[.cacheControl] == "no-cache")
            #expect(worker.text.contains("addEventListener('push'") && worker.text.contains("addEventListener('notificationclick'"))
            let policy = try #require(worker.headers[.contentSecurityPolicy])
            #expect(policy.contains("worker-src 'self'") && policy.contains("manifest-src 'self'"), "\(policy)")
            let page = try await client.call(.get, "/")
            #expect(page.headers[.contentSecurityPolicy] == policy)
            #expect(try await client.call(.get, "/sw.js", headers: [.ifNoneMatch: try #require(worker.headers[.eTag])]).status == .notModified)
        }
    }

    @Test("the web app manifest names the page, opens it at / standalone, and its icons are served")
    func manifest() async throws {
        try await withApp(InMemoryStore(), options: options()) { client in
            let page = try await client.call(.get, "/")
            #expect(page.text.contains("<link rel=\"manifest\" href=\"/manifest.webmanifest\">"))
            let answer = try await client.call(.get, "/manifest.webmanifest")
            #expect(answer.status == .ok)
            #expect(answer.headers[.contentType] == "application/manifest+json")
            #expect(answer.headers[.cacheControl] == "no-cache")
            let manifest = try #require(answer.object)
            #expect(manifest["name"] as? String == "Vicinity")
            #expect(manifest["start_url"] as? String == "/" && manifest["display"] as? String == "standalone")
            let icons = try #require(manifest["icons"] as? [[String: Any]])
            #expect(icons.count >= 3)
            for icon in icons {
                let source = try #require(icon["src"] as? String)
                let image = try await client.call(.get, source)
                #expect(image.status == .ok, "\(source)")
                #expect(image.headers[.contentType] == icon["type"] as? String, "\(source)")
            }
        }
    }

    @Test("an unchanged file is answered 304 to a client that holds it")
    func revalidation() async throws {
        try await withApp(InMemoryStore(), options: options()) { client in
            let first = try await client.call(.get, "/app/app.js")
            let tag = try #require(first.headers[.eTag])
            let again = try await client.call(.get, "/app/app.js", headers: [.ifNoneMatch: tag])
            #expect(again.status == .notModified)
            #expect(again.body.readableBytes == 0)
            #expect(try await client.call(.get, "/app/app.js", headers: [.ifNoneMatch: "\"other\""]).status == .ok)
            // Weak comparison: a proxy that compressed the file marks the tag weak; any version is `*`.
            #expect(try await client.call(.get, "/app/app.js", headers: [.ifNoneMatch: "\"other\", W/\(tag)"]).status == .notModified)
            #expect(try await client.call(.get, "/app/app.js", headers: [.ifNoneMatch: "*"]).status == .notModified)
        }
    }

    @Test("text files go gzipped to clients that take gzip, with their own tag, and as they are to others")
    func compression() async throws {
        let folder = try leafletFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = String(repeating: "L.marker([33.779842, -118.112526]).addTo(map);\n", count: 200)
        try Data(script.utf8).write(to: folder.appendingPathComponent("leaflet.js"))
        try await withApp(InMemoryStore(), options: options(leaflet: folder)) { client in
            let plain = try await client.call(.get, "/leaflet/leaflet.js")
            #expect(plain.text == script && plain.headers[.contentEncoding] == nil)
            #expect(plain.headers[.vary] == "Accept-Encoding")
            let gzipped = try await client.call(.get, "/leaflet/leaflet.js", headers: [.acceptEncoding: "br;q=1, gzip;q=0.8"])
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            let bytes = Array(gzipped.body.readableBytesView)
            #expect(bytes.count < script.utf8.count / 10)
            #expect(String(decoding: try Gzip.decompress(Data(bytes)), as: UTF8.self) == script)
            let tag = try #require(gzipped.headers[.eTag])
            #expect(tag != plain.headers[.eTag])
            let again = try await client.call(.get, "/leaflet/leaflet.js", headers: [.acceptEncoding: "gzip", .ifNoneMatch: tag])
            #expect(again.status == .notModified)
            // An image is compressed already: never encoded again.
            let image = try await client.call(.get, "/leaflet/images/layers.png", headers: [.acceptEncoding: "gzip"])
            #expect(image.headers[.contentEncoding] == nil)
        }
        #expect(GzipEncoding.isAccepted(by: "gzip, deflate"))
        #expect(GzipEncoding.isAccepted(by: "*"))
        #expect(!GzipEncoding.isAccepted(by: "gzip;q=0, *"))
        #expect(!GzipEncoding.isAccepted(by: "*;q=0"))
        #expect(!GzipEncoding.isAccepted(by: "br, identity"))
        #expect(!GzipEncoding.isAccepted(by: nil))
    }

    @Test("JSON answers of a segment or more go gzipped to clients that take gzip; small answers and other clients get them as they are")
    func answersCompressed() async throws {
        try await withApp(try await store(csulbRows)) { client in
            let path = "/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=1000&limit=50"
            let plain = try await client.call(.get, path)
            #expect(plain.status == .ok && plain.headers[.contentEncoding] == nil)
            #expect(plain.headers[.vary] == "Accept, Accept-Encoding")
            #expect(plain.body.readableBytes >= 1024)
            let gzipped = try await client.call(.get, path, headers: [.acceptEncoding: "gzip, deflate, br"])
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            #expect(gzipped.headers[.vary] == "Accept, Accept-Encoding")
            let bytes = Data(gzipped.body.readableBytesView)
            #expect(bytes.count * 3 < plain.body.readableBytes, "a list of places shrinks several times")
            #expect(try Gzip.decompress(bytes) == Data(plain.body.readableBytesView))
            #expect(try await client.call(.head, path, headers: [.acceptEncoding: "gzip"]).headers[.contentEncoding] == "gzip")
            let refused = try await client.call(.get, path, headers: [.acceptEncoding: "gzip;q=0"])
            #expect(refused.headers[.contentEncoding] == nil && refused.body == plain.body)
            // Under 1 KiB: nothing to win.
            let small = try await client.call(.get, "/v1/distance?from=0,0&to=0,1", headers: [.acceptEncoding: "gzip"])
            #expect(small.status == .ok && small.headers[.contentEncoding] == nil && small.headers[.vary] == nil)
        }
    }

    @Test("Leaflet's minified build is served for leaflet.js where the folder has one")
    func minifiedLeaflet() async throws {
        let folder = try leafletFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withApp(InMemoryStore(), options: options(leaflet: folder)) { client in
            let full = try await client.call(.get, "/leaflet/leaflet.js")
            #expect(full.text == "/* the map library */")
        }
        try Data("/*min*/".utf8).write(to: folder.appendingPathComponent("leaflet.min.js"))
        try await withApp(InMemoryStore(), options: options(leaflet: folder)) { client in
            let script = try await client.call(.get, "/leaflet/leaflet.js"), style = try await client.call(.get, "/leaflet/leaflet.css")
            #expect(script.text == "/*min*/")
            #expect(style.text == ".leaflet-container {}")
        }
    }

    @Test("Leaflet is served from the folder it is configured with, and is a 404 problem when it is not there")
    func leaflet() async throws {
        let folder = try leafletFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withApp(InMemoryStore(), options: options(leaflet: folder)) { client in
            let script = try await client.call(.get, "/leaflet/leaflet.js")
            #expect(script.status == .ok && script.text == "/* the map library */")
            #expect(try await client.call(.get, "/leaflet/leaflet.css").headers[.contentType] == "text/css; charset=utf-8")
            let image = try await client.call(.get, "/leaflet/images/layers.png")
            #expect(image.status == .ok && image.headers[.contentType] == "image/png")
            #expect(try await client.call(.get, "/leaflet/images/../leaflet.js").status == .notFound)
        }
        // Installed while the server runs: a file that was missing is looked for again, not remembered as missing.
        let later = FileManager.default.temporaryDirectory.appendingPathComponent("leaflet-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: later) }
        try await withApp(InMemoryStore(), options: options(leaflet: later)) { client in
            let missing = try await client.call(.get, "/leaflet/leaflet.js")
            #expect(missing.status == .notFound)
            #expect(missing.headers[.contentType] == "application/problem+json")
            try FileManager.default.createDirectory(at: later, withIntermediateDirectories: true)
            try Data("/* installed */".utf8).write(to: later.appendingPathComponent("leaflet.js"))
            #expect(try await client.call(.get, "/leaflet/leaflet.js").text == "/* installed */")
        }
    }

    @Test("the page's settings give the tile layer and where the map opens, and the tiles' origin may serve images")
    func settings() async throws {
        let tiles = try TileLayer(template: "https://{s}.tiles.example.org/{z}/{x}/{y}.png", attribution: " © Example contributors ")
        try await withApp(InMemoryStore(), options: options(tiles: tiles)) { client in
            let answer = try await client.call(.get, "/app/config.json")
            #expect(answer.status == .ok)
            let body = try #require(answer.object)
            let layer = try #require(body["tiles"] as? [String: Any])
            #expect(layer["url"] as? String == "https://{s}.tiles.example.org/{z}/{x}/{y}.png")
            #expect(layer["attribution"] as? String == "© Example contributors")
            let start = try #require(body["start"] as? [String: Any])
            #expect(start["lat"] as? Double == 33.779842 && start["lon"] as? Double == -118.112526 && start["zoom"] as? Int == 16)
            let policy = try #require(try await client.call(.get, "/").headers[.contentSecurityPolicy])
            #expect(policy.contains("img-src 'self' data: https://*.tiles.example.org;"), "\(policy)")
        }
        try await withApp(InMemoryStore(), options: options()) { client in
            let settings = try await client.call(.get, "/app/config.json")
            #expect(settings.object?["tiles"] is NSNull)
        }
    }

    @Test("a tile layer needs an http(s) template with {z}, {x} and {y} and an attribution; a start needs LAT,LON,ZOOM")
    func tileAndStartRules() throws {
        for template in ["javascript:alert(1)//{z}/{x}/{y}", "ftp://tiles.example.org/{z}/{x}/{y}.png",
                         "https://tiles.example.org/{z}/{x}.png", "https://user:secret@tiles.example.org/{z}/{x}/{y}.png",
                         "https://tiles.example.org';script-src *;/{z}/{x}/{y}.png", "tiles.example.org/{z}/{x}/{y}.png",
                         "https://{s}/{z}/{x}/{y}.png", "https://{s}.:8080/{z}/{x}/{y}.png"] {
            #expect(throws: ValidationError.self, "\(template)") { try TileLayer(template: template, attribution: "© Example") }
        }
        #expect(throws: ValidationError.self) { try TileLayer(template: "https://tiles.example.org/{z}/{x}/{y}.png", attribution: "  ") }
        let plain = try TileLayer(template: "http://127.0.0.1:8081/{z}/{x}/{y}.png", attribution: "© Campus GIS")
        #expect(plain.origin == "http://127.0.0.1:8081")

        let view = try MapView("13.746549, 100.492766, 17")
        let watPho = try Coordinate(latitude: 13.746549, longitude: 100.492766)
        #expect(view.centre == watPho && view.zoom == 17)
        for text in ["13.7,100.4", "91,0,10", "13.7,100.4,20", "13.7,100.4,x", ""] {
            #expect(throws: ValidationError.self, "\(text)") { try MapView(text) }
        }
    }

    @Test("campuses come as a GeoJSON FeatureCollection of their boundaries, empty when none is loaded")
    func campuses() async throws {
        let store = InMemoryStore()
        try await withApp(store) { client in
            let none = try await client.call(.get, "/v1/campuses")
            #expect(none.status == .ok && none.headers[.contentType] == "application/geo+json")
            #expect((none.object?["features"] as? [Any])?.isEmpty == true)
        }
        let gym = try Footprints.pavilionGym()
        _ = try await store.upsert([try Campus(id: PlaceID("ucsb-gym-area"), name: "Gym area", boundary: gym.outline)])
        try await withApp(store) { client in
            let collection: GeoJSONFeatureCollection = try await client.call(.get, "/v1/campuses").decoded()
            #expect(collection.features.map(\.id) == ["ucsb-gym-area"])
            #expect(collection.features.first?.geometry == .multiPolygon(gym.outline))
            #expect(collection.features.first?.properties["name"] == .string("Gym area"))
            #expect(try await client.call(.get, "/v1/campuses?limit=1").status == .badRequest)
        }
    }

    @Test("nearby places carry their footprints when asked, null for those without, and none otherwise")
    func footprints() async throws {
        let store = try await store(csulbRows)
        let gym = try Footprints.pavilionGym()
        _ = try await store.upsert([gym.place])
        try await withApp(store) { client in
            let centre = gym.place.coordinate
            let asked = try await client.call(
                .get, "/v1/places/nearby?lat=\(centre.latitude)&lon=\(centre.longitude)&radius=1000&footprint=true")
            #expect(asked.status == .ok)
            let places = asked.list("places")
            #expect(places.map { $0["id"] as? String } == ["way/32274168"])
            let data = try JSONSerialization.data(withJSONObject: try #require(places.first?["footprint"]))
            #expect(try JSONDecoder().decode(GeoJSONGeometry.self, from: data) == .multiPolygon(gym.outline))

            let hall = try await client.call(.get, "/v1/places/nearby?lat=33.779842&lon=-118.112526&limit=1&footprint=true")
            #expect(hall.list("places").first?["footprint"] is NSNull)
            let plain = try await client.call(.get, "/v1/places/nearby?lat=33.779842&lon=-118.112526&limit=1")
            #expect(plain.list("places").first?.keys.contains("footprint") == false)
            #expect(try await client.call(.get, "/v1/places/nearby?lat=33.779842&lon=-118.112526&footprint=yes").status == .badRequest)
        }
    }
}
