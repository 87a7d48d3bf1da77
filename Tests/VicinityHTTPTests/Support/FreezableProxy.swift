import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on loopback between a client and a server that can be frozen: it then stops accepting and stops
/// reading on every connection, as a proxy process stopped with SIGSTOP does (the kernel still completes new
/// handshakes and takes bytes into its buffers, and nothing comes back), until it is thawed.
final class FreezableProxy: Sendable {
    private struct State {
        var frozen = false
        var channels: [ObjectIdentifier: any Channel] = [:]
    }

    let port: Int
    private let server: any Channel
    private let registry: Registry

    private init(server: any Channel, port: Int, registry: Registry) {
        self.server = server
        self.port = port
        self.registry = registry
    }

    struct NoPort: Error {}

    /// Listens on a free port of 127.0.0.1 and forwards each connection to `upstreamPort` there.
    static func start(upstreamPort: Int) async throws -> FreezableProxy {
        let registry = Registry()
        let group = MultiThreadedEventLoopGroup.singleton
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                registry.add(inbound)
                // The inbound connection is registered, and read, only once this initializer is done: by then
                // both ends are glued.
                let upstream = ClientBootstrap(group: inbound.eventLoop)
                    .channelInitializer { outbound in
                        registry.add(outbound)
                        return outbound.eventLoop.makeCompletedFuture {
                            try outbound.pipeline.syncOperations.addHandler(Glue(partner: inbound))
                        }
                    }
                    .connect(host: "127.0.0.1", port: upstreamPort)
                return upstream.flatMap { outbound in
                    inbound.eventLoop.makeCompletedFuture {
                        try inbound.pipeline.syncOperations.addHandler(Glue(partner: outbound))
                    }.flatMap {
                        // Frozen while this connection was being made: it stays still too.
                        guard registry.frozen else { return inbound.eventLoop.makeSucceededVoidFuture() }
                        return inbound.setOption(.autoRead, value: false).and(outbound.setOption(.autoRead, value: false)).map { _ in }
                    }
                }.flatMapError { error in
                    inbound.close(promise: nil)
                    return inbound.eventLoop.makeFailedFuture(error)
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = server.localAddress?.port else { throw NoPort() }
        return FreezableProxy(server: server, port: port, registry: registry)
    }

    /// Stops accepting and reading, and returns once every connection has stopped.
    func freeze() async throws {
        let channels = registry.state.withLock { state in
            state.frozen = true
            return Array(state.channels.values)
        }
        try await server.setOption(.autoRead, value: false)
        for channel in channels where channel.isActive { try? await channel.setOption(.autoRead, value: false) }
    }

    /// Accepts and reads again, from where each connection stopped.
    func thaw() async throws {
        let channels = registry.state.withLock { state in
            state.frozen = false
            return Array(state.channels.values)
        }
        for channel in channels where channel.isActive {
            try? await channel.setOption(.autoRead, value: true)
            channel.read()
        }
        try await server.setOption(.autoRead, value: true)
        server.read()
    }

    func stop() async {
        let channels = registry.state.withLock { Array($0.channels.values) }
        try? await server.close()
        for channel in channels { try? await channel.close() }
    }

    /// The proxy's connections, and whether it is frozen, shared with the channel initializers.
    private final class Registry: Sendable {
        let state = Mutex(State())

        var frozen: Bool { state.withLock { $0.frozen } }

        func add(_ channel: any Channel) {
            let key = ObjectIdentifier(channel)
            state.withLock { $0.channels[key] = channel }
            channel.closeFuture.whenComplete { _ in self.state.withLock { _ = $0.channels.removeValue(forKey: key) } }
        }
    }

    /// Writes what one end reads to the other; when either end closes, so does the other.
    private final class Glue: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer

        let partner: any Channel

        init(partner: any Channel) { self.partner = partner }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
