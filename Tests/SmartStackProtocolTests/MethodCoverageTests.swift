import SmartStackCore
import Testing

@testable import SmartStackProtocol

@Suite("Every method")
struct MethodCoverageTests {
    static var idlMethods: [String] {
        VarlinkInterfaces.all.flatMap { interface in interface.methods.map { "\(interface.name).\($0)" } }
    }

    @Test func everyDeclaredMethodHasARequestTypeAndNoMore() {
        #expect(Set(Self.idlMethods) == Set(SmartStackMethod.allCases.map(\.rawValue)))
        #expect(Self.idlMethods.count == SmartStackMethod.allCases.count)
        for method in SmartStackMethod.allCases {
            #expect(method.requestType.method == method, "\(method)")
            #expect(method.interface + "." + method.name == method.rawValue)
        }
    }

    /// Who may call a method follows from its interface: providers act for an app, shells read or record, admins
    /// administer, and anyone may introspect; a shell method records exactly when it writes.
    @Test(arguments: SmartStackMethod.allCases)
    func accessFollowsTheInterface(method: SmartStackMethod) throws {
        switch method.interface {
        case "org.varlink.service": #expect(method.access == .introspection)
        case "io.smartstack.Provider": #expect(method.access == .provider)
        case "io.smartstack.Admin": #expect(method.access == .admin)
        case "io.smartstack.Shell": #expect(method.access == (method.records ? .shellWrites : .shellReads))
        default: Issue.record("unknown interface \(method.interface)")
        }
        let example = try method.requestType.init(parameters: object(try #require(Examples.calls[method])))
        #expect(example.anyRequest.method == method)
        #expect((example.actingApp != nil) == (method.access == .provider))
    }

    /// The list, as the server's dispatch sees it.
    @Test func theMethodList() {
        #expect(
            Self.idlMethods == [
                "org.varlink.service.GetInfo", "org.varlink.service.GetInterfaceDescription",
                "io.smartstack.Provider.RegisterWidget", "io.smartstack.Provider.Donate",
                "io.smartstack.Provider.DeleteDonations", "io.smartstack.Provider.ListDonations",
                "io.smartstack.Provider.SubmitTimeline", "io.smartstack.Provider.ReloadTimelines",
                "io.smartstack.Provider.WatchReloads", "io.smartstack.Provider.StartLiveActivity",
                "io.smartstack.Provider.UpdateLiveActivity", "io.smartstack.Provider.EndLiveActivity",
                "io.smartstack.Provider.DeclareRelevance", "io.smartstack.Shell.ConfigureStack",
                "io.smartstack.Shell.ChangeStack", "io.smartstack.Shell.GetStack", "io.smartstack.Shell.Subscribe",
                "io.smartstack.Shell.ListStacks",
                "io.smartstack.Shell.RemoveStack", "io.smartstack.Shell.RecordEngagement",
                "io.smartstack.Shell.RecordLook", "io.smartstack.Shell.SetContext", "io.smartstack.Shell.Explain",
                "io.smartstack.Shell.GetBudget", "io.smartstack.Admin.GetStatistics",
                "io.smartstack.Admin.ListAppOwners", "io.smartstack.Admin.ReleaseApp",
                "io.smartstack.Admin.SetLogLevel",
            ])
    }

    static func definition(_ method: SmartStackMethod) -> VarlinkIDL.Method? {
        Fixed.interface(method.interface)?.method(named: method.name)
    }

    @Test(arguments: SmartStackMethod.allCases)
    func recordingMethodsTakeAnOptionalDateAndQueriesAnAt(method: SmartStackMethod) throws {
        let definition = try #require(Self.definition(method))
        let date = definition.input.first { $0.name == "date" }
        #expect((date?.type == .optional(.string)) == method.records, "\(method)")
        if [.getStack, .explain, .getBudget].contains(method) {
            #expect(definition.input.first { $0.name == "at" }?.type == .optional(.string))
        }
        #expect(
            definition.documentation.joined(separator: " ").contains("requires the 'more' flag") == method.isStreaming)
    }

    @Test(arguments: SmartStackMethod.allCases)
    func exampleCallMatchesTheInterfaceAndDecodes(method: SmartStackMethod) throws {
        let text = try #require(Examples.calls[method], "no example for \(method)")
        let parameters = try object(text)
        #expect(Fixed.interface(method.interface)?.validateInput(of: method.name, parameters) == nil)
        _ = try method.requestType.init(parameters: parameters)
        let call = VarlinkCall(method: method.rawValue, parameters: parameters, more: method.isStreaming)
        #expect(try SmartStackRequest(call: call).method == method)
    }

    @Test(arguments: SmartStackMethod.allCases)
    func unknownParametersAreRejected(method: SmartStackMethod) throws {
        var parameters = try object(try #require(Examples.calls[method]))
        parameters["colour"] = "blue"
        let error = varlinkError { () throws(VarlinkError) in _ = try method.requestType.init(parameters: parameters) }
        #expect(error == .invalidParameter("colour", reason: "unknown parameter"))
    }

    @Test(arguments: SmartStackMethod.allCases)
    func requiredParametersAreRequired(method: SmartStackMethod) throws {
        let definition = try #require(Self.definition(method))
        let example = try object(try #require(Examples.calls[method]))
        for field in definition.input {
            if case .optional = field.type { continue }
            var parameters = example
            parameters[field.name] = nil
            let error = varlinkError { () throws(VarlinkError) in
                _ = try method.requestType.init(parameters: parameters)
            }
            #expect(error == .invalidParameter(field.name, reason: "required"), "\(method) \(field.name)")
            parameters[field.name] = .null
            let nullError = varlinkError { () throws(VarlinkError) in
                _ = try method.requestType.init(parameters: parameters)
            }
            #expect(nullError == .invalidParameter(field.name, reason: "required"), "\(method) \(field.name)")
        }
    }

    @Test func dispatchErrors() throws {
        func error(_ call: VarlinkCall) -> VarlinkError? {
            varlinkError { () throws(VarlinkError) in _ = try SmartStackRequest(call: call) }
        }
        #expect(error(VarlinkCall(method: "io.smartstack.Nope.GetStack")) == .interfaceNotFound("io.smartstack.Nope"))
        #expect(error(VarlinkCall(method: "io.smartstack.Shell.Nope")) == .methodNotFound("io.smartstack.Shell.Nope"))
        #expect(error(VarlinkCall(method: "io.smartstack.Shell.Subscribe")) == .expectedMore())
        #expect(
            error(VarlinkCall(method: "io.smartstack.Provider.WatchReloads", parameters: ["app": "a.b"]))
                == .expectedMore())
        #expect(
            error(VarlinkCall(method: "io.smartstack.Shell.GetStack", parameters: ["stack": 1]))
                == .invalidParameter("stack", reason: "expected a string, got integer"))
        #expect(error(VarlinkCall(method: "io.smartstack.Shell.Subscribe", more: true)) == nil)
    }
}
