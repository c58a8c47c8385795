/// A machine whose entries the analysis read, with its own totals.
public struct MachineSummary: Sendable, Hashable {
    /// `_MACHINE_ID` (empty for entries without one).
    public var machineID: String
    /// `_HOSTNAME` of its latest entry (empty when unknown).
    public var hostname: String
    /// How it is named in the merged report: its hostname, with the machine id's first 8 digits when two
    /// machines share a hostname; the machine id's first 12 when it has none.
    public var label: String
    /// Its entries of each type.
    public var entries: EntryCounts
    /// Its stacks, order-changed entries (decisions) and top changes.
    public var stacks: Int
    public var decisions: Int
    public var topChanges: Int
    /// Its first and last entry (µs).
    public var first: Int64?
    public var last: Int64?

    public init(
        machineID: String, hostname: String, label: String, entries: EntryCounts = EntryCounts(), stacks: Int = 0,
        decisions: Int = 0, topChanges: Int = 0, first: Int64? = nil, last: Int64? = nil
    ) {
        self.machineID = machineID
        self.hostname = hostname
        self.label = label
        self.entries = entries
        self.stacks = stacks
        self.decisions = decisions
        self.topChanges = topChanges
        self.first = first
        self.last = last
    }

    /// Whether `selector` names this machine: its machine id (or a prefix of at least 8 digits), hostname or label.
    public func matches(_ selector: String) -> Bool {
        let lowered = selector.lowercased()
        if lowered == machineID || selector == hostname || selector == label { return true }
        return lowered.count >= 8 && !machineID.isEmpty && machineID.hasPrefix(lowered)
    }
}

extension Analyzer {
    /// The report over the records of one or more machines.
    ///
    /// Each machine is analysed on its own (its stacks' orders are its own: two machines' `home` stacks are
    /// two stacks), then merged: entry counts added, each machine's stacks and widgets listed under
    /// `label/stack` when there is more than one machine, the span from the first to the last entry of any.
    /// `machine` keeps one machine's records (``MachineSummary/matches(_:)``); the per-machine table lists
    /// every machine read either way, so that a filter that matched nothing says which ones there are.
    public func analyzeFleet(_ records: [DecisionRecord], machine selector: String? = nil) -> AnalysisReport {
        var order: [String] = []
        var byMachine: [String: [DecisionRecord]] = [:]
        for record in records {
            if byMachine[record.machineID] == nil { order.append(record.machineID) }
            byMachine[record.machineID, default: []].append(record)
        }
        var machines = order.map { id -> MachineSummary in
            let machineRecords = byMachine[id] ?? []
            let hostname = machineRecords.max { $0.time < $1.time }?.hostname ?? ""
            return MachineSummary(machineID: id, hostname: hostname, label: hostname)
        }
        Self.label(&machines)

        var reports: [(machine: MachineSummary, report: AnalysisReport)] = []
        for var machine in machines {
            let report = analyze(byMachine[machine.machineID] ?? [])
            machine.entries = report.entries
            machine.stacks = report.stacks.count
            machine.decisions = report.stacks.reduce(0) { $0 + $1.decisions }
            machine.topChanges = report.stacks.reduce(0) { $0 + $1.topChanges }
            let times = (byMachine[machine.machineID] ?? []).map(\.time)
                .filter { time in (since.map { time >= $0 } ?? true) && (until.map { time <= $0 } ?? true) }
            machine.first = times.min()
            machine.last = times.max()
            reports.append((machine, report))
        }
        let summaries = reports.map(\.machine).sorted { $0.label < $1.label }

        var selected = reports
        var selectionNote: String?
        if let selector {
            selected = reports.filter { $0.machine.matches(selector) }
            if selected.isEmpty {
                let known = summaries.map(\.label).joined(separator: ", ")
                selectionNote = "no machine matches '\(selector)'" + (known.isEmpty ? "" : " (machines read: \(known))")
            }
        }
        var merged: AnalysisReport
        if selected.count == 1, let only = selected.first {
            merged = only.report
        } else if selected.isEmpty {
            merged = analyze([])
        } else {
            merged = Self.merge(selected, since: since, until: until)
        }
        merged.machines = summaries
        if let selectionNote { merged.notes.insert(selectionNote, at: 0) }
        return merged
    }

    /// Labels: the hostname; with the machine id's first 8 digits where hostnames repeat; the id's first 12
    /// where there is none.
    static func label(_ machines: inout [MachineSummary]) {
        var seen: [String: Int] = [:]
        for machine in machines { seen[machine.hostname, default: 0] += 1 }
        for index in machines.indices {
            let machine = machines[index]
            let id = machine.machineID.isEmpty ? "unknown" : machine.machineID
            if machine.hostname.isEmpty {
                machines[index].label = String(id.prefix(12))
            } else if seen[machine.hostname, default: 0] > 1 {
                machines[index].label = "\(machine.hostname)(\(id.prefix(8)))"
            }
        }
    }

    static func merge(
        _ reports: [(machine: MachineSummary, report: AnalysisReport)], since: Int64?, until: Int64?
    ) -> AnalysisReport {
        var merged = AnalysisReport(since: since, until: until)
        merged.start = since ?? reports.compactMap(\.report.start).min()
        merged.end = until ?? reports.compactMap(\.report.end).max()
        var notes: [String] = []
        for (machine, report) in reports.sorted(by: { $0.machine.label < $1.machine.label }) {
            merged.entries.orderChanged += report.entries.orderChanged
            merged.entries.suggestionInserted += report.entries.suggestionInserted
            merged.entries.suggestionRemoved += report.entries.suggestionRemoved
            merged.entries.reloadRequested += report.entries.reloadRequested
            merged.entries.reloadWithheld += report.entries.reloadWithheld
            merged.entries.engagement += report.entries.engagement
            for var stack in report.stacks {
                stack.stack = "\(machine.label)/\(stack.stack)"
                merged.stacks.append(stack)
            }
            for var widget in report.widgets {
                widget.stack = widget.stack.isEmpty ? machine.label : "\(machine.label)/\(widget.stack)"
                merged.widgets.append(widget)
            }
            for note in report.notes where !notes.contains(note) { notes.append(note) }
        }
        // A note that holds for only some machines is still worth reading; "no entries" only when none had any.
        merged.notes = notes.filter {
            $0 != "no smartstackd decision entries in the range" || merged.entries.total == 0
        }
        if merged.entries.engagement > 0 {
            merged.notes.removeAll { $0.hasPrefix("no engagement entries") }
        }
        return merged
    }
}
