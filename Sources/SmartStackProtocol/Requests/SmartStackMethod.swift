import SmartStackCore

/// Every method of the four interfaces, by its fully qualified name.
public enum SmartStackMethod: String, CaseIterable, Sendable, Hashable {
    case getInfo = "org.varlink.service.GetInfo"
    case getInterfaceDescription = "org.varlink.service.GetInterfaceDescription"

    case registerWidget = "io.smartstack.Provider.RegisterWidget"
    case donate = "io.smartstack.Provider.Donate"
    case deleteDonations = "io.smartstack.Provider.DeleteDonations"
    case listDonations = "io.smartstack.Provider.ListDonations"
    case submitTimeline = "io.smartstack.Provider.SubmitTimeline"
    case reloadTimelines = "io.smartstack.Provider.ReloadTimelines"
    case watchReloads = "io.smartstack.Provider.WatchReloads"
    case startLiveActivity = "io.smartstack.Provider.StartLiveActivity"
    case updateLiveActivity = "io.smartstack.Provider.UpdateLiveActivity"
    case endLiveActivity = "io.smartstack.Provider.EndLiveActivity"
    case declareRelevance = "io.smartstack.Provider.DeclareRelevance"

    case configureStack = "io.smartstack.Shell.ConfigureStack"
    case changeStack = "io.smartstack.Shell.ChangeStack"
    case getStack = "io.smartstack.Shell.GetStack"
    case subscribe = "io.smartstack.Shell.Subscribe"
    case listStacks = "io.smartstack.Shell.ListStacks"
    case removeStack = "io.smartstack.Shell.RemoveStack"
    case recordEngagement = "io.smartstack.Shell.RecordEngagement"
    case recordLook = "io.smartstack.Shell.RecordLook"
    case setContext = "io.smartstack.Shell.SetContext"
    case explain = "io.smartstack.Shell.Explain"
    case getBudget = "io.smartstack.Shell.GetBudget"

    case getStatistics = "io.smartstack.Admin.GetStatistics"
    case setLogLevel = "io.smartstack.Admin.SetLogLevel"

    /// The interface, such as `io.smartstack.Shell`.
    /// The method named `rawValue` (fully qualified), found with one hash: every call is looked up.
    public init?(rawValue: String) {
        guard let method = Self.byName[rawValue] else { return nil }
        self = method
    }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    public var interface: String {
        guard let dot = rawValue.lastIndex(of: ".") else { return rawValue }
        return String(rawValue[..<dot])
    }

    /// The method's own name, such as `GetStack`.
    public var name: String {
        guard let dot = rawValue.lastIndex(of: ".") else { return rawValue }
        return String(rawValue[rawValue.index(after: dot)...])
    }

    /// Streams replies and must be called with `more` (otherwise `org.varlink.service.ExpectedMore`).
    public var isStreaming: Bool { self == .subscribe || self == .watchReloads }

    /// Records something in the engine (so it takes an optional `date`).
    public var records: Bool {
        switch self {
        case .registerWidget, .donate, .submitTimeline, .reloadTimelines, .startLiveActivity, .updateLiveActivity,
            .endLiveActivity, .declareRelevance, .configureStack, .changeStack, .removeStack, .recordEngagement, .recordLook,
            .setContext:
            true
        default:
            false
        }
    }

    /// The request type that decodes the method's parameters.
    public var requestType: any VarlinkMethodRequest.Type {
        switch self {
        case .getInfo: GetInfoRequest.self
        case .getInterfaceDescription: GetInterfaceDescriptionRequest.self
        case .registerWidget: RegisterWidgetRequest.self
        case .donate: DonateRequest.self
        case .deleteDonations: DeleteDonationsRequest.self
        case .listDonations: ListDonationsRequest.self
        case .submitTimeline: SubmitTimelineRequest.self
        case .reloadTimelines: ReloadTimelinesRequest.self
        case .watchReloads: WatchReloadsRequest.self
        case .startLiveActivity: StartLiveActivityRequest.self
        case .updateLiveActivity: UpdateLiveActivityRequest.self
        case .endLiveActivity: EndLiveActivityRequest.self
        case .declareRelevance: DeclareRelevanceRequest.self
        case .configureStack: ConfigureStackRequest.self
        case .changeStack: ChangeStackRequest.self
        case .getStack: GetStackRequest.self
        case .subscribe: SubscribeRequest.self
        case .listStacks: ListStacksRequest.self
        case .removeStack: RemoveStackRequest.self
        case .recordEngagement: RecordEngagementRequest.self
        case .recordLook: RecordLookRequest.self
        case .setContext: SetContextRequest.self
        case .explain: ExplainRequest.self
        case .getBudget: GetBudgetRequest.self
        case .getStatistics: GetStatisticsRequest.self
        case .setLogLevel: SetLogLevelRequest.self
        }
    }
}

/// A method's parameters, decoded strictly from a call.
public protocol VarlinkMethodRequest: Sendable {
    /// The method this request is for.
    static var method: SmartStackMethod { get }
    /// Decodes and checks the parameters; every error is a reply naming the parameter's full path.
    init(parameters: JSONObject) throws(VarlinkError)
    /// The parameters as a client sends them (absent optionals left out): `Self(parameters: wireParameters)`
    /// reads back the same request. The typed client (`VarlinkClient.call(_:)`) sends these.
    var wireParameters: JSONObject { get }
}

extension VarlinkMethodRequest {
    /// Maps a Core error to this method's interface (`VarlinkError.init(_:interface:)`).
    static func wire(_ error: CoreError) -> VarlinkError { VarlinkError(error, interface: method.interface) }

    /// Runs Core code, mapping its errors to this method's interface with their paths under `prefix`.
    static func core<T>(under prefix: String = "", _ body: () throws(CoreError) -> T) throws(VarlinkError) -> T {
        do throws(CoreError) {
            return try body()
        } catch {
            throw wire(error.underPath(prefix))
        }
    }
}

/// A decoded call of any method: decode once, then switch with one handler per method.
public enum SmartStackRequest: Sendable {
    case getInfo(GetInfoRequest)
    case getInterfaceDescription(GetInterfaceDescriptionRequest)
    case registerWidget(RegisterWidgetRequest)
    case donate(DonateRequest)
    case deleteDonations(DeleteDonationsRequest)
    case listDonations(ListDonationsRequest)
    case submitTimeline(SubmitTimelineRequest)
    case reloadTimelines(ReloadTimelinesRequest)
    case watchReloads(WatchReloadsRequest)
    case startLiveActivity(StartLiveActivityRequest)
    case updateLiveActivity(UpdateLiveActivityRequest)
    case endLiveActivity(EndLiveActivityRequest)
    case declareRelevance(DeclareRelevanceRequest)
    case configureStack(ConfigureStackRequest)
    case changeStack(ChangeStackRequest)
    case getStack(GetStackRequest)
    case subscribe(SubscribeRequest)
    case listStacks(ListStacksRequest)
    case removeStack(RemoveStackRequest)
    case recordEngagement(RecordEngagementRequest)
    case recordLook(RecordLookRequest)
    case setContext(SetContextRequest)
    case explain(ExplainRequest)
    case getBudget(GetBudgetRequest)
    case getStatistics(GetStatisticsRequest)
    case setLogLevel(SetLogLevelRequest)

    /// Decodes a call: `InterfaceNotFound` for an interface the service does not implement, `MethodNotFound`
    /// for a method its interface does not declare, `ExpectedMore` for a streaming method called without
    /// `more`, then the request type's own `InvalidParameter` errors.
    public init(call: VarlinkCall) throws(VarlinkError) {
        guard let method = call.known else {
            let interface = String(call.interface)
            guard VarlinkInterfaces.definition(named: interface) != nil else { throw .interfaceNotFound(interface) }
            throw .methodNotFound(call.method)
        }
        if method.isStreaming, !call.more { throw .expectedMore() }
        let parameters = call.parameters
        switch method {
        case .getInfo: self = .getInfo(try .init(parameters: parameters))
        case .getInterfaceDescription: self = .getInterfaceDescription(try .init(parameters: parameters))
        case .registerWidget: self = .registerWidget(try .init(parameters: parameters))
        case .donate: self = .donate(try .init(parameters: parameters))
        case .deleteDonations: self = .deleteDonations(try .init(parameters: parameters))
        case .listDonations: self = .listDonations(try .init(parameters: parameters))
        case .submitTimeline: self = .submitTimeline(try .init(parameters: parameters))
        case .reloadTimelines: self = .reloadTimelines(try .init(parameters: parameters))
        case .watchReloads: self = .watchReloads(try .init(parameters: parameters))
        case .startLiveActivity: self = .startLiveActivity(try .init(parameters: parameters))
        case .updateLiveActivity: self = .updateLiveActivity(try .init(parameters: parameters))
        case .endLiveActivity: self = .endLiveActivity(try .init(parameters: parameters))
        case .declareRelevance: self = .declareRelevance(try .init(parameters: parameters))
        case .configureStack: self = .configureStack(try .init(parameters: parameters))
        case .changeStack: self = .changeStack(try .init(parameters: parameters))
        case .getStack: self = .getStack(try .init(parameters: parameters))
        case .subscribe: self = .subscribe(try .init(parameters: parameters))
        case .listStacks: self = .listStacks(try .init(parameters: parameters))
        case .removeStack: self = .removeStack(try .init(parameters: parameters))
        case .recordEngagement: self = .recordEngagement(try .init(parameters: parameters))
        case .recordLook: self = .recordLook(try .init(parameters: parameters))
        case .setContext: self = .setContext(try .init(parameters: parameters))
        case .explain: self = .explain(try .init(parameters: parameters))
        case .getBudget: self = .getBudget(try .init(parameters: parameters))
        case .getStatistics: self = .getStatistics(try .init(parameters: parameters))
        case .setLogLevel: self = .setLogLevel(try .init(parameters: parameters))
        }
    }

    /// The method called.
    public var method: SmartStackMethod {
        switch self {
        case .getInfo: .getInfo
        case .getInterfaceDescription: .getInterfaceDescription
        case .registerWidget: .registerWidget
        case .donate: .donate
        case .deleteDonations: .deleteDonations
        case .listDonations: .listDonations
        case .submitTimeline: .submitTimeline
        case .reloadTimelines: .reloadTimelines
        case .watchReloads: .watchReloads
        case .startLiveActivity: .startLiveActivity
        case .updateLiveActivity: .updateLiveActivity
        case .endLiveActivity: .endLiveActivity
        case .declareRelevance: .declareRelevance
        case .configureStack: .configureStack
        case .changeStack: .changeStack
        case .getStack: .getStack
        case .subscribe: .subscribe
        case .listStacks: .listStacks
        case .removeStack: .removeStack
        case .recordEngagement: .recordEngagement
        case .recordLook: .recordLook
        case .setContext: .setContext
        case .explain: .explain
        case .getBudget: .getBudget
        case .getStatistics: .getStatistics
        case .setLogLevel: .setLogLevel
        }
    }
}
