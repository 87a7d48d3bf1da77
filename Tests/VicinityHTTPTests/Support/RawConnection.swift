import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A plain TCP connection to the server on loopback, from a chosen loopback address, for what an HTTP client
/// library hides: requests sent byte by byte, connections held open, answers read to the close.
///
/// Built on NIO, so that a test waiting for an answer never blocks one of the few threads Swift's concurrency
/// runs on: the server under test answers on those same threads, and a blocked one can starve it on a busy
/// machine.
final class RawConnection: Sendable {
    struct TimedOut: Error {}

    private let channel: any Channel
    private let collector: Collector

    /// Connects to `port` on 127.0.0.1 from `local`: any address of 127.0.0.0/8 is this machine, so each stands
    /// for another client.
    /// With `reading` false nothing is read until `startReading`, as a client that stops reading does.
    static func open(port: Int, from local: String = "127.0.0.1", reading: Bool = true) async throws -> RawConnection {
        let group = MultiThreadedEventLoopGroup.singleton
        let eventLoop = group.next()
        let collector = Collector(closed: eventLoop.makePromise(of: (ByteBuffer, Bool).self))
        let channel = try await ClientBootstrap(group: eventLoop)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelOption(.autoRead, value: reading)
            .bind(to: try SocketAddress(ipAddress: local, port: 0))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return RawConnection(channel: channel, collector: collector)
    }

    private init(channel: any Channel, collector: Collector) {
        self.channel = channel
        self.collector = collector
    }

    func startReading() async throws {
        try await channel.setOption(.autoRead, value: true)
        channel.read()
    }

    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text))
    }

    /// Everything the server sent until it closed its side; throws `TimedOut` (and closes) if that takes
    /// longer than `limit`.
    func readUntilClosed(within limit: Duration) async throws -> String {
        let collector = collector
        let timer = channel.eventLoop.scheduleTask(in: TimeAmount(limit)) { [channel] in
            collector.closingLocally()
            channel.close(promise: nil)
        }
        let (bytes, byPeer) = try await collector.closed.futureResult.get()
        timer.cancel()
        guard byPeer else { throw TimedOut() }
        return String(buffer: bytes)
    }

    /// What the server has sent so far, once it contains `text` or the server has closed its side (then
    /// without it); throws `NotInTime` if neither comes within `limit`.
    func received(containing text: String, within limit: Duration) async throws -> String {
        let arrived = collector.arrived
        let arrival = try await waiting(for: "\"\(text)\" from the server", atMost: limit) {
            try await arrived.wait { $0.ended || String(buffer: $0.bytes).contains(text) }
        }
        return String(buffer: arrival.bytes)
    }

    /// The first `count` answers, each whole (head and as many body bytes as its `Content-Length` says), as
    /// their bytes; throws `NotInTime` if they have not all come within `limit`.
    func answers(_ count: Int, within limit: Duration) async throws -> [ByteBuffer] {
        let arrived = collector.arrived
        let arrival = try await waiting(for: "\(count) whole answers from the server", atMost: limit) {
            try await arrived.wait { $0.ended || Self.split($0.bytes).count >= count }
        }
        return Array(Self.split(arrival.bytes).prefix(count))
    }

    /// The whole answers at the start of `bytes`, each with a `Content-Length`.
    private static func split(_ bytes: ByteBuffer) -> [ByteBuffer] {
        var rest = bytes
        var answers: [ByteBuffer] = []
        let separator = Array("\r\n\r\n".utf8)
        while let headEnd = rest.readableBytesView.firstRange(of: separator) {
            let headLength = headEnd.upperBound - rest.readerIndex
            let head = String(decoding: rest.readableBytesView.prefix(headLength), as: UTF8.self).lowercased()
            guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length: ") }),
                let length = Int(line.dropFirst("content-length: ".count)),
                rest.readableBytes >= headLength + length,
                let answer = rest.readSlice(length: headLength + length)
            else { break }
            answers.append(answer)
        }
        return answers
    }

    func close() async {
        collector.closingLocally()
        try? await channel.close()
    }

    /// Closes the client's side, as a client that goes away does, and returns once the server has closed the
    /// connection: from then on the server holds nothing of it. Throws `TimedOut` after `limit`.
    func leave(within limit: Duration) async throws {
        try await channel.close(mode: .output)
        _ = try await readUntilClosed(within: limit)
        await close()
    }

    /// What has arrived, and whether the server closed its side or the connection ended.
    struct Arrival: Sendable {
        var bytes = ByteBuffer()
        var ended = false
    }

    /// Keeps what arrives; completes `closed` with it, and whether the server ended the connection, once the
    /// server closes its side or the connection ends.
    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer

        let closed: EventLoopPromise<(ByteBuffer, Bool)>
        let arrived = Watched(Arrival())
        private let state = Mutex(State())

        private struct State {
            var closingLocally = false
            var completed = false
        }

        init(closed: EventLoopPromise<(ByteBuffer, Bool)>) { self.closed = closed }

        func closingLocally() { state.withLock { $0.closingLocally = true } }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            arrived.update { $0.bytes.writeBuffer(&buffer) }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event { complete() }
        }

        func channelInactive(context: ChannelHandlerContext) { complete() }

        private func complete() {
            let byPeer: Bool? = state.withLock { state in
                guard !state.completed else { return nil }
                state.completed = true
                return !state.closingLocally
            }
            guard let byPeer else { return }
            arrived.update { $0.ended = true }
            closed.succeed((arrived.value.bytes, byPeer))
        }
    }
}
