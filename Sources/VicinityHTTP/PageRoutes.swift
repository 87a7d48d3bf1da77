import Crypto
import Foundation
import GeoCore
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization
import VicinityCore

/// The map page: its own files (`Resources/web`), Leaflet from the folder the system installed it in, and
/// the page's settings. Every answer carries the page's Content-Security-Policy, so a file served here can
/// never run a script that is not one of these files.
struct PageRoutes: RouteGroup {
    let options: PageOptions
    let page: StaticFolder
    let leaflet: StaticFolder
    let leafletImages: StaticFolder
    let qrCode: StaticFolder
    let securityPolicy: String

    init(options: PageOptions) {
        self.options = options
        if let directory = options.pageDirectory {
            page = StaticFolder(directory: URL(fileURLWithPath: directory), readEachTime: true)
        } else {
            page = StaticFolder(directory: Bundle.module.resourceURL?.appendingPathComponent("web"), readEachTime: false)
        }
        let leafletDirectory = URL(fileURLWithPath: options.leafletDirectory)
        leaflet = StaticFolder(directory: leafletDirectory, readEachTime: false)
        leafletImages = StaticFolder(directory: leafletDirectory.appendingPathComponent("images"), readEachTime: false)
        qrCode = StaticFolder(directory: URL(fileURLWithPath: options.qrCodeDirectory), readEachTime: false)
        securityPolicy = Self.securityPolicy(tiles: options.tiles)
    }

    func register(in table: inout RouteTable) {
        table.add(.get, "/", .anyone) { request, _ in try serve(page, "index.html", request) }
        table.add(.get, "/app/config.json", .anyone) { _, _ in try configuration() }
        // At the root, so that the worker's scope (its folder by default) is the whole page and the manifest's
        // start_url and scope are inside the folder it is served from.
        table.add(.get, "/sw.js", .anyone) { request, _ in try serve(page, "sw.js", request) }
        table.add(.get, "/manifest.webmanifest", .anyone) { request, _ in try serve(page, "manifest.webmanifest", request) }
        table.add(.get, "/app/{file}", .anyone) { request, context in try serve(page, context.parameters.get("file"), request) }
        table.add(.get, "/leaflet/{file}", .anyone) { request, context in
            try serve(leaflet, try leafletName(context.parameters.get("file")), request)
        }
        table.add(.get, "/leaflet/images/{file}", .anyone) { request, context in
            try serve(leafletImages, context.parameters.get("file"), request)
        }
        table.add(.get, "/qrcode/{file}", .anyone) { request, context in try serve(qrCode, context.parameters.get("file"), request) }
    }

    /// Only this server's files run as scripts and styles, only it is called, and images come from it or the
    /// tile server; no page may frame this one. Inline scripts, styles and event handlers are refused, so
    /// text that slipped into the page as markup still could not run. The service worker and the web app
    /// manifest come from this server too (`default-src 'none'` would refuse both).
    static func securityPolicy(tiles: TileLayer?) -> String {
        let images = ["'self'", "data:"] + (tiles.map { [$0.origin] } ?? [])
        return [
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src \(images.joined(separator: " "))",
            "connect-src 'self'", "font-src 'self'", "worker-src 'self'", "manifest-src 'self'", "base-uri 'none'",
            "form-action 'self'", "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    func serve(_ folder: StaticFolder, _ name: String?, _ request: Request) throws -> Response {
        guard let name, let file = try folder.file(named: name) else { throw APIError.pageFileNotFound }
        var headers = pageHeaders(contentType: file.contentType)
        // Revalidated at every load, so that a new server's page is used at once; an unchanged file costs a 304.
        headers[.cacheControl] = "no-cache"
        var body = file.bytes
        var entityTag = file.entityTag
        if let gzipped = file.gzipped {
            headers[.vary] = "Accept-Encoding"
            if GzipEncoding.isAccepted(by: request.headers.acceptEncoding) {
                headers[.contentEncoding] = "gzip"
                body = gzipped
                // Another representation, so another tag (RFC 9110 §8.8.3).
                entityTag = String(entityTag.dropLast()) + "-gzip\""
            }
        }
        headers[.eTag] = entityTag
        if Self.matches(request.headers[values: .ifNoneMatch], entityTag) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    /// `If-None-Match` by weak comparison (RFC 9110 §13.1.2): a proxy that compressed the file marks its tag
    /// weak (`W/"…"`), and the file is still the same.
    static func matches(_ fields: [String], _ entityTag: String) -> Bool {
        fields.flatMap { $0.split(separator: ",") }.contains { candidate in
            let tag = HTTPText.trimmed(candidate)
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == entityTag
        }
    }

    /// Leaflet's minified build where the folder has it (Debian's `libjs-leaflet` ships both): 138 KiB
    /// instead of 421 KiB, the same code. The page asks for `leaflet.js`, which every Leaflet folder holds.
    private func leafletName(_ name: String?) throws -> String? {
        guard name == "leaflet.js", try leaflet.file(named: "leaflet.min.js") != nil else { return name }
        return "leaflet.min.js"
    }

    /// What the page cannot know by itself: the tile layer, if any, and where the map opens.
    func configuration() throws -> Response {
        let tiles: JSONValue = options.tiles.map { tiles in
            .object(["url": .string(tiles.template), "attribution": .string(tiles.attribution)])
        } ?? .null
        let body: JSONValue = .object([
            "tiles": tiles,
            "start": .object([
                "lat": .number(options.start.centre.latitude), "lon": .number(options.start.centre.longitude),
                "zoom": .number(Double(options.start.zoom)),
            ]),
        ])
        var bytes: [UInt8] = []
        body.write(to: &bytes)
        var headers = pageHeaders(contentType: "application/json")
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private func pageHeaders(contentType: String) -> HTTPFields {
        [
            .contentType: contentType,
            .contentSecurityPolicy: securityPolicy,
            .xContentTypeOptions: "nosniff",
            // Directions links open another site: it learns nothing of this page's address.
            .referrerPolicy: "no-referrer",
        ]
    }
}

/// Files of one folder, by name. Names are single path segments of a fixed form, so that no request reaches
/// outside the folder; only file kinds the page uses are served, each with its media type.
struct StaticFolder: Sendable {
    struct File: Sendable {
        var bytes: ByteBuffer
        /// The same bytes gzipped, for text that shrinks; nil otherwise.
        var gzipped: ByteBuffer?
        var contentType: String
        var entityTag: String
    }

    /// The kinds worth compressing: text. PNG is compressed already.
    static let compressible: Set<String> = ["html", "js", "css", "svg", "json", "webmanifest"]

    static let mediaTypes: [String: String] = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "json": "application/json",
        "webmanifest": "application/manifest+json",
    ]

    let directory: URL?
    /// Read at every request (a folder being edited), or once when first asked for.
    let readEachTime: Bool
    private let cache = FileCache()

    init(directory: URL?, readEachTime: Bool) {
        self.directory = directory
        self.readEachTime = readEachTime
    }

    /// The file, or nil when the name is not of the served form or no such file is there.
    func file(named name: String) throws -> File? {
        guard Self.isServable(name), let directory else { return nil }
        if !readEachTime, let cached = cache.file(named: name) { return cached }
        // A folder being edited is read at every request: not worth compressing each time.
        guard let file = Self.read(directory.appendingPathComponent(name), name: name, compress: !readEachTime) else { return nil }
        if !readEachTime { cache.keep(file, named: name) }
        return file
    }

    /// A lower-case name beginning with a letter or digit, of letters, digits, `-`, `_` and `.`, with a known
    /// extension: never `..`, a hidden file or a path.
    static func isServable(_ name: String) -> Bool {
        // The page's names are short; the cap keeps a hostile name from costing more than a glance.
        guard let first = name.unicodeScalars.first, name.utf8.count <= 100,
            CharacterSet.lowercaseLetters.union(.decimalDigits).contains(first),
            name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isLowercase || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }),
            let kind = name.split(separator: ".").last, name.contains("."), mediaTypes[String(kind)] != nil
        else { return false }
        return true
    }

    private static func read(_ url: URL, name: String, compress: Bool) -> File? {
        guard let data = try? Data(contentsOf: url), let kind = name.split(separator: ".").last,
            let contentType = mediaTypes[String(kind)]
        else { return nil }
        // 96 bits of the file's SHA-256: no two versions of a file share a tag by chance.
        let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
        let gzipped = compress && compressible.contains(String(kind)) ? GzipEncoding.compress(data).map { ByteBuffer(bytes: $0) } : nil
        return File(bytes: ByteBuffer(bytes: data), gzipped: gzipped, contentType: contentType, entityTag: "\"\(digest)\"")
    }
}

/// Files read once, kept for the life of the process: the page and Leaflet are a few hundred KiB.
private final class FileCache: Sendable {
    private let files = Mutex<[String: StaticFolder.File]>([:])

    func file(named name: String) -> StaticFolder.File? { files.withLock { $0[name] } }
    func keep(_ file: StaticFolder.File, named name: String) { files.withLock { $0[name] = file } }
}

extension HTTPField.Name {
    /// W3C Referrer Policy; not among HTTPTypes' names.
    static var referrerPolicy: Self { Self("Referrer-Policy")! }
}
