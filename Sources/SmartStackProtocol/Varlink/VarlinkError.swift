public import SmartStackCore

/// A Varlink error reply: a reverse-domain error name and its parameters.
///
/// The standard errors are `org.varlink.service.*`; Core's `CoreError` maps to `InvalidParameter` or to the
/// calling interface's own `NotFound`, `Conflict` and `LimitExceeded` (declared in its interface file).
public struct VarlinkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error's fully qualified name, such as `org.varlink.service.InvalidParameter`.
    public var name: String
    /// The error's parameters, as the interface file declares them.
    public var parameters: JSONObject

    public init(name: String, parameters: JSONObject = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// The standard interface every Varlink service implements.
    public static let serviceInterface = "org.varlink.service"

    /// `org.varlink.service.InterfaceNotFound(interface)`: the service has no such interface.
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": .string(interface)])
    }

    /// `org.varlink.service.MethodNotFound(method)`: the interface has no such method.
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotFound", parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.MethodNotImplemented(method)`: declared, but this service does not implement it.
    public static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotImplemented", parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.InvalidParameter(parameter, reason)`: `parameter` is the full path of the bad value
    /// (`widgets[2].configuration.city`), `reason` says what is wrong with it.
    public static func invalidParameter(_ parameter: String, reason: String) -> VarlinkError {
        VarlinkError(
            name: "org.varlink.service.InvalidParameter",
            parameters: ["parameter": .string(parameter), "reason": .string(reason)])
    }

    /// `org.varlink.service.ExpectedMore`: a streaming method called without the `more` flag.
    public static func expectedMore() -> VarlinkError {
        VarlinkError(name: "org.varlink.service.ExpectedMore")
    }

    /// `org.varlink.service.PermissionDenied`: the caller may not make this call, and why (when given).
    public static func permissionDenied(reason: String? = nil) -> VarlinkError {
        VarlinkError(
            name: "org.varlink.service.PermissionDenied", parameters: reason.map { ["reason": .string($0)] } ?? [:])
    }

    /// Maps a Core error to the errors of `interface` (such as `io.smartstack.Shell`).
    ///
    /// - `invalidParameter(parameter, reason)` → `org.varlink.service.InvalidParameter(parameter, reason)`
    /// - `notFound(kind, id)` → `<interface>.NotFound(kind, id)`
    /// - `conflict(kind, id, reason)` → `<interface>.Conflict(kind, id, reason)`
    /// - `limitExceeded(limit, maximum)` → `<interface>.LimitExceeded(limit, maximum)`
    public init(_ error: CoreError, interface: String) {
        switch error {
        case .invalidParameter(let parameter, let reason):
            self = .invalidParameter(parameter, reason: reason)
        case .notFound(let kind, let id):
            self.init(name: "\(interface).NotFound", parameters: ["kind": .string(kind), "id": .string(id)])
        case .conflict(let kind, let id, let reason):
            self.init(
                name: "\(interface).Conflict",
                parameters: ["kind": .string(kind), "id": .string(id), "reason": .string(reason)])
        case .limitExceeded(let limit, let maximum):
            self.init(
                name: "\(interface).LimitExceeded",
                parameters: ["limit": .string(limit), "maximum": .int(Int64(maximum))])
        }
    }

    /// The parameter an `InvalidParameter` error names.
    public var parameter: String? {
        guard name == "org.varlink.service.InvalidParameter" else { return nil }
        return parameters["parameter"]?.stringValue
    }

    public var description: String {
        parameters.isEmpty ? name : "\(name) \(parameters)"
    }
}
