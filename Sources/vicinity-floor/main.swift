import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix

/// The layers under Vicinity's HTTP front, each alone, for `Scripts/bench/floor.sh`; never for real use:
///   vicinity-floor nio PORT           SwiftNIO's HTTP/1 pipeline on two event loops and one handler
///   vicinity-floor hummingbird PORT   a Hummingbird application with one route, on NIO's shared group as
///                                     `vicinity serve` runs
/// Both listen on 127.0.0.1:PORT and answer with the same 40 bytes of JSON (`Floor.body`), with
/// Content-Type and Content-Length, on kept-alive connections. The NIO server answers any path; the
/// Hummingbird one answers `/v1/distance` (the path the script asks of every layer) and 404 elsewhere.

enum Floor {
    /// The answer of every layer the script measures, nginx's included: 40 bytes.
    static let body = #"{"distance_m":343.6,"bearing_deg":216.5}"#

    /// Writes a line to standard output at once: the servers end by a signal, with nothing flushed.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, ["nio", "hummingbird"].contains(arguments[1]), let port = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: vicinity-floor nio|hummingbird PORT\n".utf8))
    exit(64)
}

switch arguments[1] {
case "nio":
    try await serveNIO(port: port)
default:
    try await serveHummingbird(port: port)
}

/// Answers each request once its end has arrived: the head, the body and the end in one flush.
final class FloorHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let body: ByteBuffer
    private let headers: HTTPHeaders
    private var keepAlive = true

    init(body: ByteBuffer) {
        self.body = body
        self.headers = [
            "Content-Type": "application/json",
            "Content-Length": String(body.readableBytes),
        ]
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            keepAlive = request.isKeepAlive
        case .body:
            break
        case .end:
            var headers = self.headers
            if !keepAlive { headers.add(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            if keepAlive {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}

func serveNIO(port: Int) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let body = ByteBuffer(string: Floor.body)
    let bootstrap = ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(FloorHandler(body: body))
            }
        }
    let channel = try await bootstrap.bind(host: "127.0.0.1", port: port).get()
    Floor.say("vicinity-floor nio: serving on 127.0.0.1:\(port), 2 event loops")
    try await channel.closeFuture.get()
}

func serveHummingbird(port: Int) async throws {
    let body = ByteBuffer(string: Floor.body)
    let router = Router()
    router.get("/v1/distance") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: body))
    }
    let app = Application(
        router: router,
        configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
        onServerRunning: { _ in Floor.say("vicinity-floor hummingbird: serving on 127.0.0.1:\(port)") }
    )
    try await app.runService()
}
