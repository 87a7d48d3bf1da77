import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import VicinityImport

/// Fetches an import file from an `http(s)://` URL into a temporary folder, so that data staff can point
/// `vicinity import` at a published export. The import itself then reads the local copy, all or nothing as
/// for any file; a download that fails leaves the database untouched because nothing was imported.
enum Download {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The longest a whole download may take: a 1M-place export is tens of megabytes, minutes on a slow link.
    static let deadline = TimeAmount.minutes(30)

    /// Whether the text names a URL (of any scheme, so that `fetch` can refuse the others by name) rather than
    /// a file.
    static func isURL(_ text: String) -> Bool {
        text.contains("://")
    }

    /// Downloads `address` into `folder`, under a name that keeps the file type (`places.csv.gz`), and returns
    /// its path. `progress` is told the bytes received and expected (received, when the server does not say).
    static func fetch(
        _ address: String, into folder: URL, progress: (@Sendable (Int, Int) -> Void)?
    ) async throws(Failure) -> String {
        guard let url = URL(string: address), let scheme = url.scheme?.lowercased(), url.host != nil else {
            throw Failure(description: "\(address) is not a URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw Failure(description: "only http and https URLs can be imported, not \(scheme)")
        }
        var pool = HTTPClient.Configuration.ConnectionPool()
        // One request, made by a person who can run it again: a refused connection is an answer at once,
        // not a minute of retries.
        pool.retryConnectionEstablishment = false
        let client = HTTPClient(configuration: HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            timeout: .init(connect: .seconds(10), read: .seconds(60)),
            connectionPool: pool))
        let outcome: Result<String, Failure>
        do {
            outcome = .success(try await transfer(address, url: url, client: client, into: folder, progress: progress))
        } catch let failure as Failure {
            outcome = .failure(failure)
        } catch {
            outcome = .failure(Failure(description: "\(error)"))
        }
        try? await client.shutdown()
        return try outcome.get()
    }

    private static func transfer(
        _ address: String, url: URL, client: HTTPClient, into folder: URL, progress: (@Sendable (Int, Int) -> Void)?
    ) async throws -> String {
        let response = try await client.execute(HTTPClientRequest(url: address), timeout: deadline)
        guard response.status == .ok else {
            throw Failure(description: "the server answered \(response.status.code) \(response.status.reasonPhrase)")
        }
        let name = try fileName(url: url, contentType: response.headers.first(name: "content-type"))
        let path = folder.appendingPathComponent(name).path
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            throw Failure(description: "cannot write the download to \(path)")
        }
        defer { try? file.close() }
        let expected = response.headers.first(name: "content-length").flatMap(Int.init)
        var received = 0
        for try await buffer in response.body {
            try file.write(contentsOf: buffer.readableBytesView)
            received += buffer.readableBytes
            progress?(received, max(expected ?? received, received))
        }
        if let expected, received != expected {
            throw Failure(description: "the download ended after \(received) of \(expected) bytes")
        }
        progress?(received, received)
        return path
    }

    /// The file's name from the URL's last path component when it says the type, else from the Content-Type.
    static func fileName(url: URL, contentType: String?) throws(Failure) -> String {
        let last = url.lastPathComponent
        if PlaceFileReader.Format(path: last) != nil { return last }
        let type = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        switch type {
        case "text/csv": return "download.csv"
        case "application/geo+json", "application/json": return "download.geojson"
        default:
            throw Failure(description: "cannot tell the file type from the URL (\(last)) or its Content-Type (\(type ?? "none")); use a URL ending in .csv, .geojson or .json, or one of them .gz")
        }
    }
}
