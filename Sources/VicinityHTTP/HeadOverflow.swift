import HummingbirdCore
import NIOCore
import NIOHTTP1

/// How large a request head may be: NIO's HTTP decoder holds a whole head in memory and counts the request
/// target as it counts a header field, and with its defaults (80 KiB a field and in all) every connection may
/// make the server hold 80 KiB before a handler runs. The limits are nginx's (`large_client_header_buffers 4
/// 8k`): a request target or a header line over one buffer (`HTTPOptions.maximumRequestTargetBytes`, 8 KiB), or
/// a head over four, is refused. nginx answers a long request line 414 and a long header line 400; here the
/// answers are a problem+json 414 for the target and 431 for the header fields (RFC 6585 §5), instead of the
/// empty 400 Hummingbird writes for any decoding error.
enum HeadLimits {
    /// nginx's `large_client_header_buffers` number: the head may fill this many lines' worth.
    static let linesPerHead = 4

    /// The decoder's limits for a line limit of `lineBytes`.
    static func decoder(lineBytes: Int) -> HTTP1Channel.Configuration.DecoderConfiguration {
        .init(maxHeaderFieldSize: lineBytes, maxHeaderListSize: linesPerHead * lineBytes)
    }
}

/// Watches the bytes in front of the HTTP decoder for lines too long, so that when the decoder finds a head too
/// large, `HeadOverflowHandler` can tell a request target too long (414) from header fields too large (431),
/// and answers in front of the decoder, where the answer's bytes go straight out.
///
/// The decoder gives up within the read that takes a line past the limit, so the over-long line is the first
/// one of that read (counting the line it continues) that is over the limit. A request line is told from a
/// header line by what follows its first token (RFC 9110 §5.6.2): a space (a method) or a colon (a field
/// name); its target is what lies between the method and the version.
final class RequestLineWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Enough of a line to see past the longest method a client sends to the space after it.
    private static let kept = 32
    /// " HTTP/1.1\r": what follows the target on a whole request line.
    private static let versionBytes = 10

    private let lineBytes: Int
    /// The first bytes of the line being read, and its length so far, carried from one read to the next.
    private var lineStart: [UInt8] = []
    private var lineLength = 0
    /// Whether the first line over the limit in the latest read is a request line; nil when none is over it.
    private(set) var overlongRequestLine: Bool?
    private var context: ChannelHandlerContext?
    /// Once the head too large has been answered: the close that ends the wait for the client to close.
    private var lingering: Scheduled<Void>?

    init(lineBytes: Int) { self.lineBytes = lineBytes }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Answered: the rest of what the client sends is read and dropped, never decoded.
        guard lingering == nil else { return }
        let bytes = unwrapInboundIn(data).readableBytesView
        overlongRequestLine = nil
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let feed = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
            let piece = bytes[start..<(feed ?? bytes.endIndex)]
            // A line that began in this read is judged by its own bytes; only one that goes on into the next read
            // keeps its start, so that the usual head, whole within a read, copies nothing.
            let began = lineLength == 0
            lineLength += piece.count
            if !began, lineStart.count < Self.kept { lineStart += piece.prefix(Self.kept - lineStart.count) }
            guard let feed else {
                if began { lineStart = Array(piece.prefix(Self.kept)) }
                break
            }
            if began { judge(complete: true, start: piece.prefix(Self.kept)) } else { judge(complete: true, start: lineStart[...]) }
            lineStart = []
            lineLength = 0
            start = feed + 1
        }
        judge(complete: false, start: lineStart[...])
        context.fireChannelRead(data)
    }

    /// Notes the line read so far, which starts with `start`, if it is the first one over the limit in this read.
    private func judge<Start: Collection<UInt8>>(complete: Bool, start: Start) {
        guard overlongRequestLine == nil, lineLength > lineBytes else { return }
        guard let method = Self.requestMethodLength(Array(start)) else {
            overlongRequestLine = false
            return
        }
        let target = lineLength - method - 1 - (complete ? Self.versionBytes : 0)
        overlongRequestLine = target > lineBytes
    }

    /// The length of the method when the line starting with `start` is a request line: a token, then a space.
    private static func requestMethodLength(_ start: [UInt8]) -> Int? {
        guard let end = start.firstIndex(where: { !isTokenCharacter($0) }), end > 0,
            start[end] == UInt8(ascii: " ")
        else { return nil }
        return end
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Writes `answer` to the socket (past the decoder and encoder), then closes: the write side at once, the
    /// whole connection once the client closes its side or `RefusalHandler.linger` has passed. The client is
    /// usually still sending its head; closing with its bytes unread would reset the connection, and the
    /// reset could reach the client before the answer it should read.
    func answerAndClose(_ answer: ByteBuffer) {
        guard let context, lingering == nil else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        lingering = context.eventLoop.scheduleTask(in: RefusalHandler.linger) { loopBound.value.close(promise: nil) }
        context.writeAndFlush(NIOAny(answer)).whenComplete { _ in loopBound.value.close(mode: .output, promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        lingering?.cancel()
        context.fireChannelInactive()
    }
}

/// Sits just behind the HTTP decoder and turns its "head too large" into a problem+json answer: 414 for a
/// request target over the line limit, 431 for header fields over the limits (`HeadLimits`). The decoder's error goes no
/// further, so Hummingbird writes no 400 of its own. The answer waits for the answers owed to earlier pipelined
/// requests, whose bytes it must not land inside, and the connection closes once it is out.
final class HeadOverflowHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let watch: RequestLineWatch
    private let progress: RequestProgressHandler
    private let lineBytes: Int
    private var answered = false

    init(watch: RequestLineWatch, progress: RequestProgressHandler, lineBytes: Int) {
        self.watch = watch
        self.progress = progress
        self.lineBytes = lineBytes
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !answered else { return }  // the decoder refuses every byte after its first error
        guard let parserError = error as? HTTPParserError, parserError == .headerOverflow else {
            context.fireErrorCaught(error)
            return
        }
        answered = true
        let problem = watch.overlongRequestLine == true
            ? Problem(APIError.requestTargetTooLong(limit: lineBytes))
            : Problem(APIError.headerFieldsTooLarge(lineLimit: lineBytes, headLimit: HeadLimits.linesPerHead * lineBytes))
        let watch = watch, answer = problem.rawResponse()
        progress.whenAnswered { watch.answerAndClose(answer) }
    }
}
