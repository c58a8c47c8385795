import CSystemd

#if canImport(Glibc)
    import Glibc
#endif
public import SystemPackage

/// A D-Bus error: a failed call's error name and message, or a transport failure as `Errno`.
public struct BusError: Error, Sendable, CustomStringConvertible {
    /// The D-Bus error name (`org.freedesktop.DBus.Error.…`), or empty for a transport failure.
    public var name: String
    public var message: String
    /// The errno of the failure.
    public var errno: Errno

    public var description: String {
        name.isEmpty ? "\(message): \(errno)" : "\(name): \(message)"
    }
}

/// One connection to a D-Bus bus through sd-bus, used from one thread.
///
/// Signals are received by adding match rules (`AddMatch` on the bus driver) and reading every message
/// that no call is waiting for from ``nextPending()`` after ``wait(_:timeout:)``: no C callbacks.
public final class BusConnection {
    /// Which bus.
    public enum Kind: Sendable, Equatable {
        /// The user's bus (`$DBUS_SESSION_BUS_ADDRESS` or `$XDG_RUNTIME_DIR/bus`).
        case user
        /// The system bus.
        case system
    }

    private var bus: OpaquePointer?

    /// Connects to a bus.
    public init(_ kind: Kind) throws(BusError) {
        var bus: OpaquePointer?
        let result = kind == .user ? sd_bus_open_user(&bus) : sd_bus_open_system(&bus)
        if result < 0 {
            throw BusError(
                name: "", message: "cannot connect to the \(kind == .user ? "user" : "system") bus",
                errno: Errno(systemdReturn: result))
        }
        self.bus = bus
    }

    deinit {
        if let bus { sd_bus_flush_close_unref(bus) }
    }

    /// Calls a method with string arguments (all this service needs) and returns the reply.
    public func call(
        destination: String, path: String, interface: String, member: String, arguments: [String] = [],
        timeout: Duration = .seconds(25)
    ) throws(BusError) -> BusMessage {
        var message: OpaquePointer?
        var result = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard result >= 0, let message else {
            throw BusError(name: "", message: "cannot make \(interface).\(member)", errno: Errno(systemdReturn: result))
        }
        defer { sd_bus_message_unref(message) }
        for argument in arguments {
            result = argument.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
            if result < 0 {
                throw BusError(name: "", message: "cannot append to \(member)", errno: Errno(systemdReturn: result))
            }
        }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let microseconds = UInt64(timeout.components.seconds) * 1_000_000
        result = sd_bus_call(bus, message, microseconds, &error, &reply)
        guard result >= 0, let reply else {
            throw BusError(
                name: error.name.map { String(cString: $0) } ?? "",
                message: error.message.map { String(cString: $0) } ?? "\(interface).\(member) failed",
                errno: Errno(systemdReturn: result))
        }
        return BusMessage(owning: reply)
    }

    /// Asks the bus to route messages matching `rule` (D-Bus match rule syntax) to this connection.
    public func addMatch(_ rule: String) throws(BusError) {
        _ = try call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "AddMatch", arguments: [rule])
    }

    /// A property of an object as a message positioned at the variant's value.
    public func property(destination: String, path: String, interface: String, name: String, type: String)
        throws(BusError) -> BusMessage
    {
        let reply = try call(
            destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
            arguments: [interface, name])
        try reply.enter("v", type)
        return reply
    }

    /// The next message no call waited for, without waiting; `nil` when none is queued.
    public func nextPending() throws(BusError) -> BusMessage? {
        while true {
            var message: OpaquePointer?
            let processed = sd_bus_process(bus, &message)
            if processed < 0 {
                throw BusError(name: "", message: "the bus connection failed", errno: Errno(systemdReturn: processed))
            }
            if let message { return BusMessage(owning: message) }
            if processed == 0 { return nil }
        }
    }

    /// Waits until any of `connections` has something to process, or `timeout` passes (one `poll` over
    /// their descriptors, with the events each one wants).
    public static func wait(_ connections: [BusConnection], timeout: Duration) throws(BusError) {
        var descriptors: [pollfd] = []
        for connection in connections {
            let descriptor = sd_bus_get_fd(connection.bus)
            let events = sd_bus_get_events(connection.bus)
            if descriptor < 0 || events < 0 {
                throw BusError(
                    name: "", message: "the bus connection failed",
                    errno: Errno(systemdReturn: descriptor < 0 ? descriptor : events))
            }
            descriptors.append(pollfd(fd: descriptor, events: Int16(truncatingIfNeeded: events), revents: 0))
        }
        let milliseconds = Int32(
            timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let result = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        if result < 0 && errno != EINTR {
            throw BusError(name: "", message: "poll failed", errno: Errno(rawValue: errno))
        }
    }

    /// `sd_bus_path_encode`: the object path of `id` under `prefix` (a unit's path from its name).
    public static func objectPath(prefix: String, id: String) -> String? {
        var path: UnsafeMutablePointer<CChar>?
        guard sd_bus_path_encode(prefix, id, &path) >= 0, let path else { return nil }
        defer { free(path) }
        return String(cString: path)
    }
}

/// A received D-Bus message, read one argument at a time.
public final class BusMessage {
    private let message: OpaquePointer

    init(owning message: OpaquePointer) {
        self.message = message
    }

    deinit { sd_bus_message_unref(message) }

    public var path: String? { sd_bus_message_get_path(message).map { String(cString: $0) } }
    public var interface: String? { sd_bus_message_get_interface(message).map { String(cString: $0) } }
    public var member: String? { sd_bus_message_get_member(message).map { String(cString: $0) } }

    private func check(_ result: Int32, _ what: String) throws(BusError) {
        if result < 0 { throw BusError(name: "", message: "cannot read \(what)", errno: Errno(systemdReturn: result)) }
        if result == 0 { throw BusError(name: "", message: "no \(what) left", errno: .invalidArgument) }
    }

    /// A string (`s`) or object path (`o`).
    public func readString(_ type: Character = "s") throws(BusError) -> String {
        var value: UnsafePointer<CChar>?
        try check(sd_bus_message_read_basic(message, CChar(type.asciiValue ?? 0), &value), "a string")
        return value.map { String(cString: $0) } ?? ""
    }

    public func readUInt32() throws(BusError) -> UInt32 {
        var value: UInt32 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &value), "a u")
        return value
    }

    public func readUInt64() throws(BusError) -> UInt64 {
        var value: UInt64 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "t")), &value), "a t")
        return value
    }

    public func readBool() throws(BusError) -> Bool {
        var value: Int32 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value), "a b")
        return value != 0
    }

    /// An array of bytes (`ay`).
    public func readBytes() throws(BusError) -> [UInt8] {
        var pointer: UnsafeRawPointer?
        var size = 0
        let result = sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &pointer, &size)
        if result < 0 { throw BusError(name: "", message: "cannot read ay", errno: Errno(systemdReturn: result)) }
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// Enters a container (`a`, `v`, `r` or `e` with its contents' signature); `false` at the end of an array.
    @discardableResult
    public func enter(_ type: Character, _ contents: String) throws(BusError) -> Bool {
        let result = sd_bus_message_enter_container(message, CChar(type.asciiValue ?? 0), contents)
        if result < 0 {
            throw BusError(name: "", message: "cannot enter \(type)\(contents)", errno: Errno(systemdReturn: result))
        }
        return result > 0
    }

    public func exit() throws(BusError) {
        let result = sd_bus_message_exit_container(message)
        if result < 0 {
            throw BusError(name: "", message: "cannot leave a container", errno: Errno(systemdReturn: result))
        }
    }

    /// Skips values of `types` (a signature).
    public func skip(_ types: String) throws(BusError) {
        let result = sd_bus_message_skip(message, types)
        if result < 0 { throw BusError(name: "", message: "cannot skip \(types)", errno: Errno(systemdReturn: result)) }
    }
}
