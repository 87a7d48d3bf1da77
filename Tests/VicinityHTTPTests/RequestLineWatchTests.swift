import NIOCore
import NIOEmbedded
import Testing
@testable import VicinityHTTP

/// `RequestLineWatch` alone, fed the bytes of a head in the pieces a socket may deliver them in.
@Suite("The request line watch")
struct RequestLineWatchTests {
    static let limit = 64

    /// Whether the watch, fed `pieces` one read each, finds the first over-long line of the last read to be a
    /// request line (nil: no line over the limit).
    static func verdict(_ pieces: [String]) throws -> Bool? {
        let watch = RequestLineWatch(lineBytes: limit)
        let channel = EmbeddedChannel(handler: watch)
        for piece in pieces { try channel.writeInbound(ByteBuffer(string: piece)) }
        return watch.overlongRequestLine
    }

    static let longTarget = "/" + String(repeating: "a", count: limit + 1)
    static let longField = "X-Long: " + String(repeating: "b", count: limit + 1)

    @Test("an over-long target or header line is told apart whether its line comes whole in one read or over several")
    func wholeOrSplit() throws {
        let request = "GET \(Self.longTarget) HTTP/1.1\r\nHost: a\r\n\r\n"
        #expect(try Self.verdict([request]) == true)
        #expect(try Self.verdict(["GET /a", String(request.dropFirst(6))]) == true)
        #expect(try Self.verdict(["GE", "T /", String(request.dropFirst(5).prefix(20)), String(request.dropFirst(25))]) == true)
        // The method whole in one read, the space after it and the rest of the line in the next.
        #expect(try Self.verdict(["GET", String(request.dropFirst(3))]) == true)

        let field = "GET / HTTP/1.1\r\n\(Self.longField)\r\n\r\n"
        #expect(try Self.verdict([field]) == false)
        #expect(try Self.verdict(["GET / HTTP/1.1\r\nX-Lo", String(field.dropFirst(20))]) == false)
        // A line still under way at the read's end, over the limit already.
        #expect(try Self.verdict(["GET \(Self.longTarget)"]) == true)
        #expect(try Self.verdict(["GET / HTTP/1.1\r\nHost: a\r\n\r\n"]) == nil)
    }
}
