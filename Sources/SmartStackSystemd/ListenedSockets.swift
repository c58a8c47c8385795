internal import CSystemd
public import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A socket the service manager passed to this process (`sd_listen_fds(3)`), with its name.
public struct ListenedSocket: Sendable, Hashable {
    /// The descriptor, `SD_LISTEN_FDS_START` (3) or above; close-on-exec is already set.
    public let descriptor: FileDescriptor
    /// The `FileDescriptorName=` of the socket unit; `unknown` when the manager named none.
    public let name: String

    /// Whether this is a listening `AF_UNIX` stream socket (`sd_is_socket_unix(3)`), what Varlink needs.
    public var isListeningUnixStream: Bool {
        sd_is_socket_unix(descriptor.rawValue, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0
    }

    /// A socket as given, for tests and for servers that received it some other way.
    public init(descriptor: FileDescriptor, name: String) {
        self.descriptor = descriptor
        self.name = name
    }

    /// The name libsystemd reports for a descriptor passed without `LISTEN_FDNAMES`.
    public static let unnamed = "unknown"
}

/// The sockets passed by socket activation, taken once at startup.
public struct ListenedSockets: Sendable, Hashable {
    /// The `FileDescriptorName=` smartstackd's socket units give the Varlink socket.
    public static let varlinkName = "varlink"

    /// Every passed socket, in the order the manager passed them.
    public let sockets: [ListenedSocket]

    /// Sockets as given, for tests and for servers that received them some other way.
    public init(_ sockets: [ListenedSocket]) {
        self.sockets = sockets
    }

    /// Takes the sockets systemd passed (`sd_listen_fds_with_names(3)`) and unsets `LISTEN_PID`,
    /// `LISTEN_FDS` and `LISTEN_FDNAMES`, so that no child inherits them.
    ///
    /// Returns no sockets when the process was not socket-activated, or the variables were meant for
    /// another process (`LISTEN_PID`). Call once, early: a second call finds nothing.
    public static func take() throws(Errno) -> ListenedSockets {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil
        let count = sd_listen_fds_with_names(1, &names)
        defer { freeStrv(names) }
        guard count >= 0 else { throw Errno(systemdReturn: count) }
        let sockets = (0..<count).map { index in
            ListenedSocket(
                descriptor: FileDescriptor(rawValue: SD_LISTEN_FDS_START + index),
                name: names?[Int(index)].map { String(cString: $0) } ?? ListenedSocket.unnamed
            )
        }
        return ListenedSockets(sockets)
    }

    /// Whether the process was socket-activated at all.
    public var isEmpty: Bool {
        sockets.isEmpty
    }

    /// The first socket with this `FileDescriptorName=`.
    public func named(_ name: String) -> ListenedSocket? {
        sockets.first { $0.name == name }
    }

    /// The socket to serve Varlink on: the one named `varlink`, otherwise the only socket passed when
    /// the manager gave it no name of its own (`unknown`, or systemd's default, the unit name
    /// `*.socket`). `nil` when there is none, or several without a `varlink` among them.
    public var varlink: ListenedSocket? {
        varlinkSockets.first
    }

    /// Every socket to serve Varlink on: all named `varlink` (a socket unit names each of its `ListenStream=`
    /// sockets with its `FileDescriptorName=`, so a unit with two paths passes two), otherwise the only socket
    /// passed when the manager gave it no name of its own.
    public var varlinkSockets: [ListenedSocket] {
        let named = sockets.filter { $0.name == Self.varlinkName }
        if !named.isEmpty { return named }
        guard sockets.count == 1, let only = sockets.first else { return [] }
        return only.name == ListenedSocket.unnamed || only.name.hasSuffix(".socket") ? [only] : []
    }

    /// Frees a NULL-terminated string array allocated by libsystemd (`strv_free`).
    private static func freeStrv(_ strv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
        guard let strv else { return }
        var index = 0
        while let string = strv[index] {
            free(string)
            index += 1
        }
        free(strv)
    }
}
