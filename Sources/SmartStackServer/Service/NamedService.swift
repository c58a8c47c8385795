public import ServiceLifecycle

/// A service of the daemon's `ServiceGroup` that describes itself by its type's name: swift-service-lifecycle logs
/// each service's description (at debug), which was every stored property's, buffers and loggers included, up to
/// 2.3 KB a line.
public protocol NamedService: Service, CustomStringConvertible {}

extension NamedService {
    public var description: String { String(describing: Self.self) }
}
