import SmartStackCtlKit
import SmartStackEval
import SmartStackProtocol
import Testing

/// The wire calls of a replay mirror the evaluation's mapping of log rows to engine events.
struct ReplayPlanTests {
    static let log = """
        # smartstack-usage/1
        user\ttime\tapp\tevent
        bob\t2022-01-01T10:00:00.000-08:00\t-\thome
        bob\t2022-01-01T10:00:05.000-08:00\tfirefox.exe\topen
        bob\t2022-01-01T10:30:00.000-08:00\tcode\topen
        bob\t2022-01-01T10:31:00.000-08:00\tfirefox.exe\topen
        al ice\t2022-01-01T09:00:00.000-08:00\tterm/inal\topen
        al ice\t2022-01-01T11:00:00.000-08:00\t-\thome
        """

    @Test func callsInTimeOrderWithSetupFirst() throws {
        let parsed = try UsageLog.parse(Self.log, file: "t.tsv")
        var options = ReplayPlan.Options()
        options.stackSize = 1
        let plan = ReplayPlan(log: parsed, options: options)
        #expect(plan.rows == 6)
        #expect(plan.users.map(\.stack) == ["bob", "al_20ice"])
        #expect(plan.users.map(\.widgets) == [["bob.firefox.exe"], ["al_20ice.term_2Final"]])
        #expect(
            plan.calls.map(\.method) == [
                "io.smartstack.Provider.RegisterWidget", "io.smartstack.Shell.ConfigureStack",
                "io.smartstack.Provider.Donate",  // al ice at 09:00
                "io.smartstack.Provider.RegisterWidget", "io.smartstack.Shell.ConfigureStack",
                "io.smartstack.Shell.RecordLook",  // bob at 10:00
                "io.smartstack.Provider.Donate", "io.smartstack.Provider.Donate", "io.smartstack.Provider.Donate",
                "io.smartstack.Shell.RecordLook",  // al ice at 11:00
            ])
        let donate = plan.calls[6].parameters
        #expect(donate["app"] == .string("bob.firefox.exe"))
        #expect(donate["intent"] == .string("open"))
        #expect(donate["date"] == .string("2022-01-01T10:00:05.000-08:00"))
        #expect(donate["id"] == .string("r2"))
        let configure = plan.calls[4].parameters
        #expect(configure["stack"] == .string("bob"))
        #expect(configure["family"] == .string("systemMedium"))
        #expect(configure["date"] == .string("2022-01-01T10:00:00.000-08:00"))
        #expect(
            configure["widgets"]
                == .array([.object(["instance": "bob.firefox.exe", "app": "bob.firefox.exe", "kind": "main"])]))
        #expect(plan.calls[3].parameters["displayName"] == .string("firefox.exe"))
        #expect(plan.calls.map(\.row) == [0, 0, 0, 1, 1, 1, 2, 3, 4, 5])
    }

    @Test func evaluationQueriesEachHomeMomentWithItsTarget() throws {
        var options = ReplayPlan.Options()
        options.evaluate = true
        let plan = ReplayPlan(log: try UsageLog.parse(Self.log, file: "t.tsv"), options: options)
        let queries = plan.calls.filter { $0.method == "io.smartstack.Shell.GetStack" }
        #expect(queries.count == 2)
        #expect(queries[0].parameters["at"] == .string("2022-01-01T10:00:00.000-08:00"))
        #expect(queries[0].moment?.target == "bob.firefox.exe")
        #expect(queries[1].moment?.target == nil)
    }

    @Test func identifiersAreOneToOne() {
        #expect(ReplayPlan.identifier("a_b") == "a_5Fb")
        #expect(ReplayPlan.identifier("a b") == "a_20b")
        #expect(ReplayPlan.identifier("é") == "_C3_A9")
        #expect(ReplayPlan.identifier("") == "_")
        #expect(ReplayPlan.appID(user: "u", app: "x.exe") == "u.x.exe")
    }
}
