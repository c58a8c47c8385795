import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Who is on the other end of a connection, from the kernel (`SO_PEERCRED`), not from anything it said.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// Unknown credentials (the socket could not tell).
    public static let unknown = PeerCredentials(pid: 0, uid: UInt32.max, gid: UInt32.max)

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }

    /// The peer's credentials of a connected Unix socket descriptor (`SO_PEERCRED`); `unknown` when it cannot tell.
    static func of(descriptor: Int32) -> PeerCredentials {
        #if canImport(Glibc)
            var credentials = KernelPeerCredentials()
            var length = socklen_t(MemoryLayout<KernelPeerCredentials>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return .unknown }
            return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
        #else
            return .unknown
        #endif
    }

    /// The peer's credentials of a connected Unix socket channel, read now (on the channel's event loop).
    static func now(of channel: any Channel) -> PeerCredentials {
        #if canImport(Glibc)
            guard let provider = channel as? any SocketOptionProvider else { return .unknown }
            let future: EventLoopFuture<KernelPeerCredentials> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            // On the channel's loop the option is read at once and the future is already complete.
            var credentials = PeerCredentials.unknown
            future.assumeIsolated().whenSuccess { credentials = PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid) }
            return credentials
        #else
            return .unknown
        #endif
    }
}

/// The layout of Linux's `struct ucred` (which Swift's Glibc module does not export without `_GNU_SOURCE`).
struct KernelPeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
