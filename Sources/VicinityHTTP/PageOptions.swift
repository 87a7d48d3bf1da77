import Foundation
import GeoCore
import VicinityCore

/// What the map page at `/` is served with.
public struct PageOptions: Sendable {
    /// Where Debian's `libjs-leaflet` puts Leaflet (`leaflet.js`, `leaflet.css`, `images/`).
    public static let debianLeafletDirectory = "/usr/share/javascript/leaflet"
    /// Where Debian's `node-qrcode-generator` puts its browser script (`qrcode.js`).
    public static let debianQRCodeDirectory = "/usr/share/javascript/qrcode-generator"

    /// The folder holding Leaflet, served under `/leaflet/`.
    public var leafletDirectory: String
    /// The folder holding the QR code library the page draws a phone app's settings with, served under `/qrcode/`.
    public var qrCodeDirectory: String
    /// A folder to serve the page's own files from instead of the copy built into the server, read again at
    /// every request: for editing the page without rebuilding.
    public var pageDirectory: String?
    /// A raster tile layer under what Vicinity draws; none by default, so the page needs no tile server.
    public var tiles: TileLayer?
    /// Where the map opens.
    public var start: MapView

    public static let standard = PageOptions()

    public init(
        leafletDirectory: String = PageOptions.debianLeafletDirectory, qrCodeDirectory: String = PageOptions.debianQRCodeDirectory,
        pageDirectory: String? = nil, tiles: TileLayer? = nil, start: MapView = .standard
    ) {
        self.leafletDirectory = leafletDirectory
        self.qrCodeDirectory = qrCodeDirectory
        self.pageDirectory = pageDirectory
        self.tiles = tiles
        self.start = start
    }
}

/// Where the map opens: a centre and a Leaflet zoom level.
public struct MapView: Hashable, Sendable {
    public var centre: Coordinate
    public var zoom: Int

    /// Zoom levels of the usual web map tiles (OpenStreetMap's go to 19).
    public static let zoomLevels = 0...19

    /// At the Hall of Science, CSULB (`csulb-hsci` in Data/csulb-buildings.csv), close enough to read the
    /// buildings' names: the campus the shipped data covers.
    public static let standard: MapView = {
        guard let centre = try? Coordinate(latitude: 33.779842, longitude: -118.112526) else {
            preconditionFailure("the Hall of Science's coordinates are valid")
        }
        return MapView(centre: centre, zoom: 16)
    }()

    /// Reads `LAT,LON,ZOOM`.
    public init(_ text: String) throws(ValidationError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 3, let latitude = Double(parts[0]), let longitude = Double(parts[1]), let zoom = Int(parts[2]),
            let centre = try? Coordinate(latitude: latitude, longitude: longitude)
        else { throw ValidationError(field: "map start", message: "must be LAT,LON,ZOOM in degrees, such as 33.779842,-118.112526,16") }
        guard Self.zoomLevels.contains(zoom) else {
            throw ValidationError(field: "map start", message: "zoom must be in \(Self.zoomLevels.lowerBound)...\(Self.zoomLevels.upperBound)")
        }
        self.init(centre: centre, zoom: zoom)
    }

    init(centre: Coordinate, zoom: Int) {
        self.centre = centre
        self.zoom = zoom
    }
}

/// A raster tile server the operator has, as Leaflet reads it: a URL template with `{z}`, `{x}` and `{y}`
/// (and `{s}` for subdomains), and the attribution its licence asks to show.
public struct TileLayer: Hashable, Sendable {
    public let template: String
    public let attribution: String
    /// The origin the page's Content-Security-Policy lets images come from: `https://*.tile.example.org` for
    /// a template with `{s}` in its host.
    public let origin: String

    public init(template: String, attribution: String) throws(ValidationError) {
        guard let components = URLComponents(string: template.replacingOccurrences(of: "{s}", with: "s")),
            let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
            components.user == nil, components.password == nil,
            let host = template.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first,
            host.allSatisfy({ $0.isLetter || $0.isNumber || "-.:{}".contains($0) }) && host.isASCII
        else {
            throw ValidationError(field: "map tiles", message: "must be an http or https URL template, such as https://tiles.example.org/{z}/{x}/{y}.png")
        }
        guard ["{z}", "{x}", "{y}"].allSatisfy(template.contains) else {
            throw ValidationError(field: "map tiles", message: "must contain {z}, {x} and {y}")
        }
        // `{s}` stands for a subdomain: a host that is nothing else would let images come from anywhere.
        let name = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard !name.replacingOccurrences(of: "{s}", with: "").allSatisfy({ !$0.isLetter && !$0.isNumber }) else {
            throw ValidationError(field: "map tiles", message: "must name a host, not only {s}")
        }
        let text = attribution.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            throw ValidationError(field: "map attribution", message: "is required with tiles: the tile server's licence asks for it")
        }
        self.template = template
        self.attribution = text
        origin = "\(scheme)://\(host.lowercased().replacingOccurrences(of: "{s}", with: "*"))"
    }
}

extension Substring {
    fileprivate var isASCII: Bool { unicodeScalars.allSatisfy(\.isASCII) }
}
