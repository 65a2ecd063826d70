// satqm validation: an ns-3 (3.44) dumbbell used as an independent reference.
//
//   sender_i --access(i)-- R1 ==bottleneck== R2 --access rx-- receiver_i
//
// N bulk TCP transfers (BulkSendApplication, MaxBytes=0) from sender_i to a
// PacketSink on receiver_i.  All links are point-to-point.
//
// Bottleneck queue placement (the one choice made here, see README.md):
//   the configured queue (droptail=FifoQueueDisc, red, ared, pie, codel,
//   fq_codel) is a
//   traffic-control queue disc on R1's bottleneck NetDevice with its limit in
//   packets; the NetDevice's own DropTail queue is `deviceQueuePackets`
//   (default 1) so the queue disc holds the backlog and makes every drop
//   decision.  All other devices get no queue disc and a device queue of
//   `accessBufferPackets` packets so that they never drop.
//
// Output: one JSON file (see docs/validation.md for the fields).
//
// Build: satqm.validation.ns3.build (g++ against the `ns3` PyPI wheel); run:
// satqm.validation.ns3.run.run_ns3, or `satqm validate ns3` for the paired runs.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>

using namespace ns3;

namespace ns3
{

/**
 * NewReno whose ssthresh after a loss is max(FlightSize / 2, 2 SMSS) with
 * FlightSize = HighTxMark - last cumulative ACK (RFC 5681 eq. 4; RFC 6675
 * step 4.2), as satqm does. ns-3's own TcpNewReno halves BytesInFlight(),
 * which with SACK is RFC 6675's pipe (SACKed and lost segments excluded).
 * For experiments only: `--tcp=NewRenoFlightSize`.
 */
class TcpNewRenoFlightSize : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpNewRenoFlightSize")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpNewRenoFlightSize>();
        return tid;
    }

    TcpNewRenoFlightSize() = default;

    TcpNewRenoFlightSize(const TcpNewRenoFlightSize& sock)
        : TcpNewReno(sock)
    {
    }

    std::string GetName() const override
    {
        return "TcpNewRenoFlightSize";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t /* bytesInFlight */) override
    {
        int32_t flight = tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq;
        uint32_t f = flight > 0 ? static_cast<uint32_t>(flight) : 0;
        return std::max(2 * tcb->m_segmentSize, f / 2);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpNewRenoFlightSize>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(TcpNewRenoFlightSize);

} // namespace ns3

namespace
{

// ---------------------------------------------------------------------------
// Minimal JSON writer
// ---------------------------------------------------------------------------

std::string
JsonEscape(const std::string& s)
{
    std::string out;
    out.reserve(s.size() + 2);
    for (char c : s)
    {
        switch (c)
        {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20)
            {
                char buf[8];
                std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                out += buf;
            }
            else
            {
                out += c;
            }
        }
    }
    return out;
}

std::string
Num(double v)
{
    if (!std::isfinite(v))
    {
        return "null";
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.10g", v);
    return buf;
}

std::string
Num(uint32_t v)
{
    return std::to_string(v);
}

std::string
Str(const std::string& s)
{
    return "\"" + JsonEscape(s) + "\"";
}

std::string
Bool(bool b)
{
    return b ? "true" : "false";
}

template <typename T>
std::string
Array(const std::vector<T>& v)
{
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i)
    {
        if (i)
        {
            out += ",";
        }
        out += Num(v[i]);
    }
    return out + "]";
}

std::string
QueueLimitString(const QueueSize& q)
{
    std::ostringstream os;
    os << q;
    return os.str();
}

std::vector<double>
ParseDoubleList(const std::string& s)
{
    std::vector<double> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        if (item.find_first_not_of(" \t") == std::string::npos)
        {
            continue;
        }
        out.push_back(std::stod(item));
    }
    return out;
}

void
Fail(const std::string& msg)
{
    std::cerr << "dumbbell: error: " << msg << std::endl;
    std::exit(2);
}

// ---------------------------------------------------------------------------
// Per-run recorders (globals keep the trace sinks simple; one run per process)
// ---------------------------------------------------------------------------

struct FlowStats
{
    uint64_t retransmissions = 0;    // segments retransmitted (BulkSend TcpRetransmission)
    uint64_t rtoEvents = 0;          // entries into CA_LOSS
    uint64_t recoveryEvents = 0;     // entries into CA_RECOVERY (fast retransmit)
    uint64_t bottleneckDrops = 0;    // this flow's packets dropped by the bottleneck queue disc
    uint64_t errorDrops = 0;         // this flow's packets lost to the bottleneck error model
    uint32_t cwnd = 0;               // latest congestion window (bytes)
    uint32_t ssthresh = 0;           // latest slow-start threshold (bytes)
    uint64_t rxAtWarmup = 0;         // sink bytes at t = warmup
    Time start;
};

std::vector<FlowStats> g_flows;
std::map<uint32_t, uint32_t> g_addrToFlow; // sender IPv4 address -> flow index

// flow 0 cwnd log
std::vector<double> g_cwndT;
std::vector<double> g_cwndV;
bool g_cwnd0Seen = false;
bool g_cwndLog = true;

// bottleneck counters
uint64_t g_btlTxPackets = 0;
uint64_t g_btlTxBytes = 0;   // bytes on the wire incl. 2-byte PPP header
uint64_t g_btlTxIpBytes = 0; // IP bytes (PPP header excluded)
uint64_t g_qdiscDrops = 0;
uint64_t g_qdiscMarks = 0;
uint64_t g_devDrops = 0;
uint64_t g_tcDrops = 0;
uint64_t g_errorDrops = 0;
uint64_t g_accessDrops = 0;
std::vector<double> g_dropTimes;
const size_t kMaxDropTimes = 200000;
double g_duration = 0;

// queue samples
std::vector<double> g_sampleT;
std::vector<uint32_t> g_sampleQdiscPkts;
std::vector<uint32_t> g_sampleQdiscBytes;
std::vector<uint32_t> g_sampleDevPkts;
std::vector<std::vector<uint32_t>> g_sampleCwnd; // [flow][sample]
// cumulative counters at each sample instant (windowed figures are differences)
std::vector<double> g_sampleTxWire;    // bottleneck wire bytes sent (PPP header included)
std::vector<double> g_sampleTxIp;      // bottleneck IP bytes sent
std::vector<double> g_sampleDrops;     // queue-disc drops
std::vector<double> g_sampleArrivals;  // packets offered to the queue disc
std::vector<double> g_sampleErrDrops;  // error-model losses
std::vector<double> g_sampleMarks;     // queue-disc ECN marks
std::vector<std::vector<double>> g_sampleRx; // [flow][sample] sink bytes
std::vector<Ptr<PacketSink>> g_sinks;

int
FlowOfIpv4(Ipv4Address src)
{
    auto it = g_addrToFlow.find(src.Get());
    return it == g_addrToFlow.end() ? -1 : static_cast<int>(it->second);
}

int
FlowOfPppPacket(Ptr<const Packet> p)
{
    // A packet seen on a point-to-point device carries a PPP header, then IPv4.
    Ptr<Packet> copy = p->Copy();
    PppHeader ppp;
    if (copy->RemoveHeader(ppp) == 0 || ppp.GetProtocol() != 0x0021)
    {
        return -1;
    }
    Ipv4Header ip;
    copy->PeekHeader(ip);
    return FlowOfIpv4(ip.GetSource());
}

void
OnBottleneckTxEnd(Ptr<const Packet> p)
{
    if (Simulator::Now().GetSeconds() > g_duration)
    {
        return;
    }
    g_btlTxPackets++;
    g_btlTxBytes += p->GetSize();
    g_btlTxIpBytes += p->GetSize() >= 2 ? p->GetSize() - 2 : 0;
}

void
OnQdiscDrop(Ptr<const QueueDiscItem> item)
{
    g_qdiscDrops++;
    if (g_dropTimes.size() < kMaxDropTimes)
    {
        g_dropTimes.push_back(Simulator::Now().GetSeconds());
    }
    Ptr<const Ipv4QueueDiscItem> ipItem = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (ipItem)
    {
        int f = FlowOfIpv4(ipItem->GetHeader().GetSource());
        if (f >= 0)
        {
            g_flows[f].bottleneckDrops++;
        }
    }
}

void
OnQdiscMark(Ptr<const QueueDiscItem>, const char*)
{
    g_qdiscMarks++;
}

void
OnDevQueueDrop(Ptr<const Packet>)
{
    g_devDrops++;
}

void
OnTcDrop(Ptr<const Packet>)
{
    g_tcDrops++;
}

void
OnErrorDrop(Ptr<const Packet> p)
{
    g_errorDrops++;
    int f = FlowOfPppPacket(p);
    if (f >= 0)
    {
        g_flows[f].errorDrops++;
    }
}

void
OnAccessDrop(Ptr<const Packet>)
{
    g_accessDrops++;
}

void
OnRetransmission(uint32_t flow,
                 Ptr<const Packet>,
                 const TcpHeader&,
                 const Address&,
                 const Address&,
                 Ptr<const TcpSocketBase>)
{
    g_flows[flow].retransmissions++;
}

void
OnCwnd(uint32_t flow, uint32_t oldV, uint32_t newV)
{
    g_flows[flow].cwnd = newV;
    if (flow == 0 && g_cwndLog)
    {
        double t = Simulator::Now().GetSeconds();
        if (!g_cwnd0Seen)
        {
            g_cwnd0Seen = true;
            g_cwndT.push_back(g_flows[0].start.GetSeconds());
            g_cwndV.push_back(oldV);
        }
        g_cwndT.push_back(t);
        g_cwndV.push_back(newV);
    }
}

void
OnSsthresh(uint32_t flow, uint32_t, uint32_t newV)
{
    g_flows[flow].ssthresh = newV;
}

void
OnCongState(uint32_t flow, TcpSocketState::TcpCongState_t oldS, TcpSocketState::TcpCongState_t newS)
{
    if (newS == TcpSocketState::CA_LOSS && oldS != TcpSocketState::CA_LOSS)
    {
        g_flows[flow].rtoEvents++;
    }
    if (newS == TcpSocketState::CA_RECOVERY && oldS != TcpSocketState::CA_RECOVERY)
    {
        g_flows[flow].recoveryEvents++;
    }
}

void
HookSocket(uint32_t flow, Ptr<BulkSendApplication> app)
{
    Ptr<Socket> s = app->GetSocket();
    if (!s)
    {
        Fail("flow " + std::to_string(flow) + ": BulkSendApplication has no socket after start");
    }
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, flow));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsthresh, flow));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, flow));
}

/// CPU time of this process so far (user + system), seconds.
double
CpuSeconds()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

void
Sample(Ptr<QueueDisc> qd, Ptr<Queue<Packet>> devQ, double interval, double end)
{
    g_sampleT.push_back(Simulator::Now().GetSeconds());
    g_sampleQdiscPkts.push_back(qd->GetNPackets());
    g_sampleQdiscBytes.push_back(qd->GetNBytes());
    g_sampleDevPkts.push_back(devQ->GetNPackets());
    for (size_t i = 0; i < g_flows.size(); ++i)
    {
        g_sampleCwnd[i].push_back(g_flows[i].cwnd);
        g_sampleRx[i].push_back(static_cast<double>(g_sinks[i]->GetTotalRx()));
    }
    g_sampleTxWire.push_back(static_cast<double>(g_btlTxBytes));
    g_sampleTxIp.push_back(static_cast<double>(g_btlTxIpBytes));
    g_sampleDrops.push_back(static_cast<double>(g_qdiscDrops));
    g_sampleArrivals.push_back(static_cast<double>(qd->GetStats().nTotalReceivedPackets));
    g_sampleErrDrops.push_back(static_cast<double>(g_errorDrops));
    g_sampleMarks.push_back(static_cast<double>(g_qdiscMarks));
    Time next = Simulator::Now() + Seconds(interval);
    if (next.GetSeconds() <= end + 1e-12)
    {
        Simulator::Schedule(Seconds(interval), &Sample, qd, devQ, interval, end);
    }
}

void
RecordWarmup(std::vector<Ptr<PacketSink>> sinks)
{
    for (size_t i = 0; i < sinks.size(); ++i)
    {
        g_flows[i].rxAtWarmup = sinks[i]->GetTotalRx();
    }
}

struct MeanStd
{
    double mean = 0;
    double std = 0;
};

template <typename T>
MeanStd
Stats(const std::vector<T>& v, const std::vector<double>& t, double from)
{
    MeanStd r;
    double n = 0;
    double s = 0;
    double s2 = 0;
    for (size_t i = 0; i < v.size(); ++i)
    {
        if (t[i] + 1e-12 < from)
        {
            continue;
        }
        double x = static_cast<double>(v[i]);
        n += 1;
        s += x;
        s2 += x * x;
    }
    if (n > 0)
    {
        r.mean = s / n;
        double var = s2 / n - r.mean * r.mean;
        r.std = var > 0 ? std::sqrt(var) : 0;
    }
    return r;
}

} // namespace

int
main(int argc, char* argv[])
{
    // ---------------- parameters ----------------
    uint32_t nFlows = 3;
    double bottleneckRate = 10e6;
    double bottleneckDelay = 0.290;
    double accessRate = 100e6;
    std::string accessDelays = "0.005";
    double accessDelayRx = 0.005;
    uint32_t bufferPackets = 800;
    uint32_t accessBufferPackets = 100000;
    uint32_t deviceQueuePackets = 1;
    std::string queueDisc = "droptail";
    // RED / ARED
    double redMinTh = 5;
    double redMaxTh = 15;
    double redMaxP = 0.02; // LInterm = 1/maxP
    double redQW = 0.002;
    bool redGentle = true;
    bool redPacketMode = true;
    bool redWait = true;
    uint32_t redMeanPktSize = 0; // 0: mss + IP/TCP headers (+ options)
    bool redUseEcn = false;      // mark ECN-capable packets instead of dropping them
    bool redHardDrop = true;     // forced region drops even with ECN (ns-3's UseHardDrop)
    bool aredAuto = true;        // ns-3 "ARED" flag (auto minTh/maxTh/qW + AdaptMaxP)
    bool aredAdaptMaxP = true;
    bool aredFeng = false;
    double aredTargetDelay = 0.005;
    double aredInterval = 0.5;
    double aredTop = 0.5;
    double aredBottom = 0.0;
    double aredAlpha = 0.01;
    double aredBeta = 0.9;
    double aredRtt = 0.1;
    // PIE
    double pieTarget = 0.015;
    double pieTupdate = 0.015;
    double pieMaxBurst = 0.150;
    bool pieDqRate = false;
    // CoDel
    double codelTarget = 0.005;
    double codelInterval = 0.100;
    // FQ-CoDel (its CoDel's target and interval are codelTarget/codelInterval)
    uint32_t fqFlows = 1024;
    uint32_t fqQuantum = 0;     // 0: the device's MTU (ns-3's default)
    uint32_t fqDropBatch = 64;
    uint32_t fqMinBytes = 1500; // each flow queue's CoDel MinBytes (ns-3's default)
    bool fqUseEcn = true;       // ns-3's default: CoDel marks ECN-capable packets
    // TCP
    std::string tcp = "NewReno";
    std::string recovery = "classic";
    uint32_t mss = 1460;
    uint32_t initialCwnd = 2;
    uint32_t delAckCount = 2;
    double delAckTimeout = 0.2;
    bool sack = false;
    bool windowScaling = true;
    bool timestamps = false;
    double minRto = 1.0;
    double initialRto = 1.0;
    double clockGranularity = 0.001;
    uint32_t dataRetries = 100;
    uint32_t rcvBuf = 16 * 1024 * 1024;
    uint32_t sndBuf = 16 * 1024 * 1024;
    bool limitedTransmit = true;
    bool pacing = false; // TcpSocketState::EnablePacing (TcpBbr turns it on itself)
    bool ecn = false;    // TcpSocketBase::UseEcn On (TcpDctcp turns it on itself)
    // run
    double errorRate = 0.0;
    double duration = 60.0;
    double sampleInterval = 0.1;
    double warmup = 0.0;
    double startSpread = 0.0;
    std::string startTimes;
    uint32_t seed = 1;
    uint32_t run = 1;
    bool cwndLog = true;
    std::string attrs;
    std::string out = "ns3-dumbbell.json";

    CommandLine cmd(__FILE__);
    cmd.AddValue("nFlows", "number of sender/receiver pairs", nFlows);
    cmd.AddValue("bottleneckRate", "bottleneck rate (bit/s)", bottleneckRate);
    cmd.AddValue("bottleneckDelay", "bottleneck one-way delay (s)", bottleneckDelay);
    cmd.AddValue("accessRate", "access link rate (bit/s), both sides", accessRate);
    cmd.AddValue("accessDelays",
                 "comma-separated sender-side access one-way delays (s), one per flow; "
                 "the last value is repeated for the remaining flows",
                 accessDelays);
    cmd.AddValue("accessDelayRx", "receiver-side access one-way delay (s)", accessDelayRx);
    cmd.AddValue("bufferPackets", "bottleneck queue-disc limit (packets)", bufferPackets);
    cmd.AddValue("accessBufferPackets", "device queue limit on all non-bottleneck devices (packets)", accessBufferPackets);
    cmd.AddValue("deviceQueuePackets", "NetDevice queue under the bottleneck queue disc (packets)", deviceQueuePackets);
    cmd.AddValue("queueDisc", "droptail|red|ared|pie|codel|fq_codel|fq_pie|fq_cobalt", queueDisc);
    cmd.AddValue("minTh", "RED min threshold (packets)", redMinTh);
    cmd.AddValue("maxTh", "RED max threshold (packets)", redMaxTh);
    cmd.AddValue("maxP", "RED max drop probability (LInterm = 1/maxP)", redMaxP);
    cmd.AddValue("qW", "RED queue weight (0: 1-exp(-1/C), -1, -2: ns-3 auto rules)", redQW);
    cmd.AddValue("gentle", "RED gentle mode", redGentle);
    cmd.AddValue("packetMode", "RED in packets (true) or bytes (false)", redPacketMode);
    cmd.AddValue("wait", "RED wait between drops (ns-2 'wait_')", redWait);
    cmd.AddValue("meanPktSize", "RED MeanPktSize bytes (0: mss+40[+12 with timestamps])", redMeanPktSize);
    cmd.AddValue("redUseEcn", "RED UseEcn: mark ECN-capable packets instead of dropping", redUseEcn);
    cmd.AddValue("redHardDrop", "RED UseHardDrop: drop in the forced region even with ECN", redHardDrop);
    cmd.AddValue("aredAuto", "ared: ns-3 ARED=true (auto minTh/maxTh/qW, AdaptMaxP)", aredAuto);
    cmd.AddValue("aredAdaptMaxP", "ared: AdaptMaxP (used when aredAuto=false)", aredAdaptMaxP);
    cmd.AddValue("aredFeng", "ared: FengAdaptive instead of AdaptMaxP", aredFeng);
    cmd.AddValue("aredTargetDelay", "ared: TargetDelay (s)", aredTargetDelay);
    cmd.AddValue("aredInterval", "ared: Interval between maxP updates (s)", aredInterval);
    cmd.AddValue("aredTop", "ared: Top (upper bound of maxP)", aredTop);
    cmd.AddValue("aredBottom", "ared: Bottom (0: auto)", aredBottom);
    cmd.AddValue("aredAlpha", "ared: Alpha (additive increase)", aredAlpha);
    cmd.AddValue("aredBeta", "ared: Beta (multiplicative decrease)", aredBeta);
    cmd.AddValue("aredRtt", "ared: Rtt used for automatic Bottom (s)", aredRtt);
    cmd.AddValue("pieTarget", "PIE QueueDelayReference (s)", pieTarget);
    cmd.AddValue("pieTupdate", "PIE Tupdate (s)", pieTupdate);
    cmd.AddValue("pieMaxBurst", "PIE MaxBurstAllowance (s)", pieMaxBurst);
    cmd.AddValue("pieDqRate", "PIE UseDequeueRateEstimator", pieDqRate);
    cmd.AddValue("codelTarget", "CoDel Target (s)", codelTarget);
    cmd.AddValue("codelInterval", "CoDel Interval (s)", codelInterval);
    cmd.AddValue("fqFlows", "FQ-CoDel Flows", fqFlows);
    cmd.AddValue("fqQuantum", "FQ-CoDel quantum (bytes; 0: the device's MTU)", fqQuantum);
    cmd.AddValue("fqDropBatch", "FQ-CoDel DropBatchSize", fqDropBatch);
    cmd.AddValue("fqMinBytes", "FQ-CoDel: each flow queue's CoDel MinBytes", fqMinBytes);
    cmd.AddValue("fqUseEcn", "FQ-CoDel UseEcn: CoDel marks ECN-capable packets", fqUseEcn);
    cmd.AddValue("tcp", "congestion control: NewReno|LinuxReno|Cubic|... (ns3::Tcp<name>)", tcp);
    cmd.AddValue("recovery", "classic (TcpClassicRecovery) | prr (TcpPrrRecovery)", recovery);
    cmd.AddValue("mss", "TCP segment size (payload bytes)", mss);
    cmd.AddValue("initialCwnd", "initial congestion window (segments)", initialCwnd);
    cmd.AddValue("delAckCount", "segments per ACK: 1 = no delayed ACK, 2 = delayed ACK", delAckCount);
    cmd.AddValue("delAckTimeout", "delayed-ACK timeout (s)", delAckTimeout);
    cmd.AddValue("sack", "SACK option", sack);
    cmd.AddValue("windowScaling", "window-scale option", windowScaling);
    cmd.AddValue("timestamps", "timestamp option", timestamps);
    cmd.AddValue("minRto", "minimum RTO (s)", minRto);
    cmd.AddValue("initialRto", "initial RTO (s) (RttEstimator InitialEstimation)", initialRto);
    cmd.AddValue("clockGranularity", "RTO clock granularity (s)", clockGranularity);
    cmd.AddValue("dataRetries", "retransmissions of one segment before giving up", dataRetries);
    cmd.AddValue("rcvBuf", "TCP receive buffer (bytes)", rcvBuf);
    cmd.AddValue("sndBuf", "TCP send buffer (bytes)", sndBuf);
    cmd.AddValue("limitedTransmit", "RFC 3042 limited transmit", limitedTransmit);
    cmd.AddValue("pacing", "TcpSocketState::EnablePacing", pacing);
    cmd.AddValue("ecn", "TcpSocketBase::UseEcn On (classic ECN; TcpDctcp sets its own)", ecn);
    cmd.AddValue("errorRate", "per-packet loss probability on the bottleneck (data direction)", errorRate);
    cmd.AddValue("duration", "simulated time (s)", duration);
    cmd.AddValue("sampleInterval", "queue / cwnd sampling interval (s)", sampleInterval);
    cmd.AddValue("warmup", "also report goodput and queue stats from this time on (s)", warmup);
    cmd.AddValue("startSpread", "flow start times uniform in [0, startSpread] (s)", startSpread);
    cmd.AddValue("startTimes",
                 "comma-separated flow start times (s), one per flow (the last repeats); "
                 "replaces startSpread",
                 startTimes);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run", run);
    cmd.AddValue("cwndLog", "log flow 0's cwnd on every change", cwndLog);
    cmd.AddValue("attrs", "extra ns-3 defaults 'ns3::Type::Attr=value;...' applied last", attrs);
    cmd.AddValue("out", "output JSON path", out);
    cmd.Parse(argc, argv);

    // ---------------- validation ----------------
    if (nFlows == 0)
    {
        Fail("nFlows must be >= 1");
    }
    if (bottleneckRate <= 0 || accessRate <= 0)
    {
        Fail("rates must be > 0");
    }
    if (duration <= 0 || sampleInterval <= 0)
    {
        Fail("duration and sampleInterval must be > 0");
    }
    if (bufferPackets == 0 || deviceQueuePackets == 0)
    {
        Fail("bufferPackets and deviceQueuePackets must be >= 1");
    }
    std::vector<double> accDelays = ParseDoubleList(accessDelays);
    if (accDelays.empty())
    {
        Fail("accessDelays is empty");
    }
    if (accDelays.size() > nFlows)
    {
        Fail("accessDelays has more entries than nFlows");
    }
    while (accDelays.size() < nFlows)
    {
        accDelays.push_back(accDelays.back());
    }
    std::vector<double> starts = ParseDoubleList(startTimes);
    if (starts.size() > nFlows)
    {
        Fail("startTimes has more entries than nFlows");
    }
    for (double st : starts)
    {
        if (st < 0 || st >= duration)
        {
            Fail("startTimes must be in [0, duration)");
        }
    }
    if (!starts.empty())
    {
        while (starts.size() < nFlows)
        {
            starts.push_back(starts.back());
        }
    }
    if (queueDisc != "droptail" && queueDisc != "red" && queueDisc != "ared" && queueDisc != "pie" &&
        queueDisc != "codel" && queueDisc != "fq_codel" && queueDisc != "fq_pie" &&
        queueDisc != "fq_cobalt")
    {
        Fail("queueDisc must be droptail|red|ared|pie|codel|fq_codel|fq_pie|fq_cobalt, got '" +
             queueDisc + "'");
    }
    if (fqFlows == 0 || fqDropBatch == 0)
    {
        Fail("fqFlows and fqDropBatch must be >= 1");
    }
    if (recovery != "classic" && recovery != "prr")
    {
        Fail("recovery must be classic|prr");
    }
    if (redMaxP <= 0 || redMaxP > 1)
    {
        Fail("maxP must be in (0, 1]");
    }
    if (redMinTh > redMaxTh)
    {
        Fail("minTh must be <= maxTh");
    }
    if (errorRate < 0 || errorRate >= 1)
    {
        Fail("errorRate must be in [0, 1)");
    }
    std::string tcpTypeName = tcp.rfind("ns3::", 0) == 0 ? tcp : "ns3::Tcp" + tcp;
    TypeId tcpTid;
    if (!TypeId::LookupByNameFailSafe(tcpTypeName, &tcpTid))
    {
        Fail("unknown TCP congestion control " + tcpTypeName);
    }
    g_duration = duration;

    const uint32_t hdrBytes = 40 + (timestamps ? 12 : 0);
    const uint32_t ipPktSize = mss + hdrBytes; // full-size data packet (IP bytes)
    if (redMeanPktSize == 0)
    {
        redMeanPktSize = ipPktSize;
    }
    const uint32_t mtu = std::max<uint32_t>(1500, ipPktSize + 40); // never fragment

    // ---------------- ns-3 defaults ----------------
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(tcpTid));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "classic" ? TcpClassicRecovery::GetTypeId()
                                                         : TcpPrrRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(delAckTimeout)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(dataRetries));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(windowScaling));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Seconds(clockGranularity)));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(pacing));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecn ? "On" : "Off"));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(initialRto)));

    // ---------------- topology ----------------
    NodeContainer senders;
    NodeContainer receivers;
    NodeContainer routers;
    senders.Create(nFlows);
    receivers.Create(nFlows);
    routers.Create(2);
    Ptr<Node> r1 = routers.Get(0);
    Ptr<Node> r2 = routers.Get(1);

    InternetStackHelper stack;
    stack.InstallAll();

    const std::string bigQueue = std::to_string(accessBufferPackets) + "p";

    PointToPointHelper btl;
    btl.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(bottleneckRate))));
    btl.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    btl.SetChannelAttribute("Delay", TimeValue(Seconds(bottleneckDelay)));
    btl.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(std::to_string(deviceQueuePackets) + "p")));
    NetDeviceContainer btlDevs = btl.Install(r1, r2);
    Ptr<PointToPointNetDevice> btlDev = DynamicCast<PointToPointNetDevice>(btlDevs.Get(0));
    Ptr<PointToPointNetDevice> btlRevDev = DynamicCast<PointToPointNetDevice>(btlDevs.Get(1));
    // reverse (ACK) direction: large device queue, no queue disc
    btlRevDev->GetQueue()->SetMaxSize(QueueSize(bigQueue));

    NetDeviceContainer accessDevs; // all non-bottleneck devices
    std::vector<NetDeviceContainer> sndLinks(nFlows);
    std::vector<NetDeviceContainer> rcvLinks(nFlows);
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        PointToPointHelper acc;
        acc.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(accessRate))));
        acc.SetDeviceAttribute("Mtu", UintegerValue(mtu));
        acc.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(bigQueue)));
        acc.SetChannelAttribute("Delay", TimeValue(Seconds(accDelays[i])));
        sndLinks[i] = acc.Install(senders.Get(i), r1);
        acc.SetChannelAttribute("Delay", TimeValue(Seconds(accessDelayRx)));
        rcvLinks[i] = acc.Install(r2, receivers.Get(i));
        accessDevs.Add(sndLinks[i]);
        accessDevs.Add(rcvLinks[i]);
    }

    // Bottleneck queue disc on R1's device (installed before addresses are
    // assigned so that Ipv4AddressHelper does not add its default FqCoDel).
    TrafficControlHelper tch;
    const QueueSize qlimit =
        (queueDisc == "red" || queueDisc == "ared") && !redPacketMode
            ? QueueSize(QueueSizeUnit::BYTES, static_cast<uint32_t>(bufferPackets) * redMeanPktSize)
            : QueueSize(QueueSizeUnit::PACKETS, bufferPackets);
    if (queueDisc == "droptail")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(qlimit));
    }
    else if (queueDisc == "red" || queueDisc == "ared")
    {
        const double thScale = redPacketMode ? 1.0 : static_cast<double>(redMeanPktSize);
        // ARED knobs go in as defaults (one SetRootQueueDisc call takes a
        // bounded number of attributes); plain RED keeps them off.
        const bool ared = queueDisc == "ared";
        Config::SetDefault("ns3::RedQueueDisc::ARED", BooleanValue(ared && aredAuto));
        Config::SetDefault("ns3::RedQueueDisc::AdaptMaxP", BooleanValue(ared && aredAdaptMaxP && !aredFeng));
        Config::SetDefault("ns3::RedQueueDisc::FengAdaptive", BooleanValue(ared && aredFeng));
        Config::SetDefault("ns3::RedQueueDisc::TargetDelay", TimeValue(Seconds(aredTargetDelay)));
        Config::SetDefault("ns3::RedQueueDisc::Interval", TimeValue(Seconds(aredInterval)));
        Config::SetDefault("ns3::RedQueueDisc::Top", DoubleValue(aredTop));
        Config::SetDefault("ns3::RedQueueDisc::Bottom", DoubleValue(aredBottom));
        Config::SetDefault("ns3::RedQueueDisc::Alpha", DoubleValue(aredAlpha));
        Config::SetDefault("ns3::RedQueueDisc::Beta", DoubleValue(aredBeta));
        Config::SetDefault("ns3::RedQueueDisc::Rtt", TimeValue(Seconds(aredRtt)));
        Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(redUseEcn));
        Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(redHardDrop));
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(qlimit),
                             "MinTh", DoubleValue(redMinTh * thScale),
                             "MaxTh", DoubleValue(redMaxTh * thScale),
                             "LInterm", DoubleValue(1.0 / redMaxP),
                             "QW", DoubleValue(redQW),
                             "Gentle", BooleanValue(redGentle),
                             "Wait", BooleanValue(redWait),
                             "MeanPktSize", UintegerValue(redMeanPktSize),
                             "LinkBandwidth", DataRateValue(DataRate(static_cast<uint64_t>(bottleneckRate))),
                             "LinkDelay", TimeValue(Seconds(bottleneckDelay)));
    }
    else if (queueDisc == "pie")
    {
        tch.SetRootQueueDisc("ns3::PieQueueDisc",
                             "MaxSize", QueueSizeValue(qlimit),
                             "MeanPktSize", UintegerValue(ipPktSize),
                             "QueueDelayReference", TimeValue(Seconds(pieTarget)),
                             "Tupdate", TimeValue(Seconds(pieTupdate)),
                             "MaxBurstAllowance", TimeValue(Seconds(pieMaxBurst)),
                             "UseDequeueRateEstimator", BooleanValue(pieDqRate));
    }
    else if (queueDisc == "fq_codel")
    {
        // Each flow queue is a CoDelQueueDisc made from its TypeId: MinBytes
        // goes in as a default; FqCoDel passes Target, Interval, MaxSize and
        // UseEcn itself.
        Config::SetDefault("ns3::CoDelQueueDisc::MinBytes", UintegerValue(fqMinBytes));
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                             "MaxSize", QueueSizeValue(qlimit),
                             "Flows", UintegerValue(fqFlows),
                             "DropBatchSize", UintegerValue(fqDropBatch),
                             "UseEcn", BooleanValue(fqUseEcn),
                             "Target", StringValue(std::to_string(std::llround(codelTarget * 1e9)) + "ns"),
                             "Interval", StringValue(std::to_string(std::llround(codelInterval * 1e9)) + "ns"));
    }
    else if (queueDisc == "fq_pie")
    {
        // A PieQueueDisc per flow queue; A and B come in through --attrs
        // (ns3::FqPieQueueDisc::A/B).
        tch.SetRootQueueDisc("ns3::FqPieQueueDisc",
                             "MaxSize", QueueSizeValue(qlimit),
                             "Flows", UintegerValue(fqFlows),
                             "DropBatchSize", UintegerValue(fqDropBatch),
                             "UseEcn", BooleanValue(fqUseEcn),
                             "MeanPktSize", UintegerValue(ipPktSize),
                             "QueueDelayReference", TimeValue(Seconds(pieTarget)),
                             "Tupdate", TimeValue(Seconds(pieTupdate)),
                             "MaxBurstAllowance", TimeValue(Seconds(pieMaxBurst)),
                             "UseDequeueRateEstimator", BooleanValue(pieDqRate));
    }
    else if (queueDisc == "fq_cobalt")
    {
        // A CobaltQueueDisc per flow queue, with CoDel's target and interval
        // from codelTarget/codelInterval and ns-3's BLUE defaults.
        tch.SetRootQueueDisc("ns3::FqCobaltQueueDisc",
                             "MaxSize", QueueSizeValue(qlimit),
                             "Flows", UintegerValue(fqFlows),
                             "DropBatchSize", UintegerValue(fqDropBatch),
                             "UseEcn", BooleanValue(fqUseEcn),
                             "Target", StringValue(std::to_string(std::llround(codelTarget * 1e9)) + "ns"),
                             "Interval", StringValue(std::to_string(std::llround(codelInterval * 1e9)) + "ns"));
    }
    else // codel
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc",
                             "MaxSize", QueueSizeValue(qlimit),
                             "MinBytes", UintegerValue(ipPktSize),
                             "Target", TimeValue(Seconds(codelTarget)),
                             "Interval", TimeValue(Seconds(codelInterval)));
    }
    // Extra ns-3 defaults from --attrs go in last: they override the TCP
    // defaults above and any queue-disc attribute not set explicitly.
    if (!attrs.empty())
    {
        std::stringstream ss(attrs);
        std::string kv;
        while (std::getline(ss, kv, ';'))
        {
            if (kv.empty())
            {
                continue;
            }
            auto eq = kv.find('=');
            if (eq == std::string::npos)
            {
                Fail("attrs entry without '=': " + kv);
            }
            if (!Config::SetDefaultFailSafe(kv.substr(0, eq), StringValue(kv.substr(eq + 1))))
            {
                Fail("attrs: cannot set " + kv);
            }
        }
    }

    QueueDiscContainer qdiscs = tch.Install(btlDev);
    Ptr<QueueDisc> qdisc = qdiscs.Get(0);
    // The quantum has no attribute: set before the queue disc is initialized
    // (0 keeps ns-3's default, the device's MTU).
    if (fqQuantum > 0)
    {
        if (auto fq = DynamicCast<FqCoDelQueueDisc>(qdisc))
        {
            fq->SetQuantum(fqQuantum);
        }
        else if (auto fqpie = DynamicCast<FqPieQueueDisc>(qdisc))
        {
            fqpie->SetQuantum(fqQuantum);
        }
        else if (auto fqcobalt = DynamicCast<FqCobaltQueueDisc>(qdisc))
        {
            fqcobalt->SetQuantum(fqQuantum);
        }
    }

    // Addresses: one /30 per link.  Sender i's address identifies flow i.
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    addr.Assign(btlDevs);
    std::vector<Ipv4Address> rcvAddr(nFlows);
    addr.SetBase("10.1.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        Ipv4InterfaceContainer ifs = addr.Assign(sndLinks[i]);
        g_addrToFlow[ifs.GetAddress(0).Get()] = i;
        addr.NewNetwork();
    }
    addr.SetBase("10.128.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        Ipv4InterfaceContainer ifs = addr.Assign(rcvLinks[i]);
        rcvAddr[i] = ifs.GetAddress(1);
        addr.NewNetwork();
    }
    // No queue disc anywhere but on the bottleneck (the default FqCoDel that
    // Ipv4AddressHelper installs would otherwise sit on the other devices).
    TrafficControlHelper::Default().Uninstall(accessDevs);
    TrafficControlHelper::Default().Uninstall(NetDeviceContainer(btlRevDev));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Error model on the data direction of the bottleneck (received at R2).
    int64_t stream = 1000;
    if (errorRate > 0)
    {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        em->SetRate(errorRate);
        em->AssignStreams(stream++);
        btlRevDev->SetReceiveErrorModel(em);
    }
    if (auto red = DynamicCast<RedQueueDisc>(qdisc))
    {
        stream += red->AssignStreams(stream);
    }
    else if (auto pie = DynamicCast<PieQueueDisc>(qdisc))
    {
        stream += pie->AssignStreams(stream);
    }
    stream += 10;

    // ---------------- traffic ----------------
    g_flows.assign(nFlows, FlowStats());
    g_sampleCwnd.assign(nFlows, {});
    g_sampleRx.assign(nFlows, {});
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetStream(stream++);
    const uint16_t port = 50000;
    std::vector<Ptr<PacketSink>> sinks(nFlows);
    std::vector<Ptr<BulkSendApplication>> apps(nFlows);
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(receivers.Get(i));
        sa.Start(Seconds(0));
        sa.Stop(Seconds(duration));
        sinks[i] = DynamicCast<PacketSink>(sa.Get(0));

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(rcvAddr[i], port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer ca = src.Install(senders.Get(i));
        double st = !starts.empty() ? starts[i]
                    : startSpread > 0 ? startRv->GetValue(0, startSpread)
                                      : 0.0;
        g_flows[i].start = Seconds(st);
        ca.Start(Seconds(st));
        ca.Stop(Seconds(duration));
        apps[i] = DynamicCast<BulkSendApplication>(ca.Get(0));
        apps[i]->TraceConnectWithoutContext("TcpRetransmission", MakeBoundCallback(&OnRetransmission, i));
        // the socket exists once the application has started
        Simulator::Schedule(Seconds(st) + NanoSeconds(1), &HookSocket, i, apps[i]);
    }

    // ---------------- traces ----------------
    btlDev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnBottleneckTxEnd));
    qdisc->TraceConnectWithoutContext("Drop", MakeCallback(&OnQdiscDrop));
    qdisc->TraceConnectWithoutContext("Mark", MakeCallback(&OnQdiscMark));
    btlDev->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&OnDevQueueDrop));
    btlDev->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&OnDevQueueDrop));
    r1->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext("TcDrop", MakeCallback(&OnTcDrop));
    btlRevDev->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnErrorDrop));
    btlRevDev->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&OnAccessDrop));
    for (uint32_t d = 0; d < accessDevs.GetN(); ++d)
    {
        Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(accessDevs.Get(d));
        dev->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&OnAccessDrop));
        dev->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&OnAccessDrop));
        dev->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnAccessDrop));
    }
    g_cwndLog = cwndLog;

    g_sinks = sinks;
    Simulator::Schedule(Seconds(0), &Sample, qdisc, btlDev->GetQueue(), sampleInterval, duration);
    if (warmup > 0 && warmup < duration)
    {
        Simulator::Schedule(Seconds(warmup), &RecordWarmup, sinks);
    }

    // 1 ns past the end, so that the sample due at t = duration is taken
    Simulator::Stop(Seconds(duration) + NanoSeconds(1));
    const double cpu0 = CpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(t1 - t0).count();
    const double cpuRun = CpuSeconds() - cpu0;

    // ---------------- results ----------------
    const QueueDisc::Stats& qs = qdisc->GetStats();
    std::vector<double> goodputs;
    uint64_t totalRx = 0;
    std::ostringstream flows;
    flows << "[";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        uint64_t rx = sinks[i]->GetTotalRx();
        totalRx += rx;
        double gp = rx * 8.0 / duration;
        goodputs.push_back(gp);
        double gpw = (warmup > 0 && warmup < duration)
                         ? (rx - g_flows[i].rxAtWarmup) * 8.0 / (duration - warmup)
                         : gp;
        if (i)
        {
            flows << ",";
        }
        flows << "\n    {\"flow\": " << i << ", \"start_s\": " << Num(g_flows[i].start.GetSeconds())
              << ", \"access_delay_s\": " << Num(accDelays[i])
              << ", \"rtt_prop_s\": " << Num(2 * (accDelays[i] + bottleneckDelay + accessDelayRx))
              << ", \"bytes_received\": " << rx << ", \"goodput_bps\": " << Num(gp)
              << ", \"goodput_after_warmup_bps\": " << Num(gpw)
              << ", \"retransmissions\": " << g_flows[i].retransmissions
              << ", \"rto_events\": " << g_flows[i].rtoEvents
              << ", \"fast_recovery_events\": " << g_flows[i].recoveryEvents
              << ", \"bottleneck_drops\": " << g_flows[i].bottleneckDrops
              << ", \"error_drops\": " << g_flows[i].errorDrops
              << ", \"final_cwnd_bytes\": " << g_flows[i].cwnd
              << ", \"final_ssthresh_bytes\": " << g_flows[i].ssthresh << "}";
    }
    flows << "\n  ]";

    double sumG = 0;
    double sumG2 = 0;
    for (double g : goodputs)
    {
        sumG += g;
        sumG2 += g * g;
    }
    // Undefined when no flow delivered anything: NaN, written as null.
    double jain = sumG2 > 0 ? sumG * sumG / (nFlows * sumG2) : std::nan("");

    MeanStd qAll = Stats(g_sampleQdiscPkts, g_sampleT, 0.0);
    MeanStd qWarm = Stats(g_sampleQdiscPkts, g_sampleT, warmup);
    std::vector<uint32_t> totalPkts(g_sampleQdiscPkts.size());
    for (size_t k = 0; k < totalPkts.size(); ++k)
    {
        totalPkts[k] = g_sampleQdiscPkts[k] + g_sampleDevPkts[k];
    }
    MeanStd qTot = Stats(totalPkts, g_sampleT, 0.0);

    std::map<std::string, uint64_t> dropReasons;
    for (const auto& [k, v] : qs.nDroppedPacketsBeforeEnqueue)
    {
        dropReasons[std::string("before_enqueue: ") + k] += v;
    }
    for (const auto& [k, v] : qs.nDroppedPacketsAfterDequeue)
    {
        dropReasons[std::string("after_dequeue: ") + k] += v;
    }

    std::ostringstream js;
    js << "{\n";
    js << "  \"tool\": \"ns-3\",\n";
    js << "  \"ns3_version\": \"3.44\",\n";
    js << "  \"params\": {"
       << "\"nFlows\": " << nFlows << ", \"bottleneckRate\": " << Num(bottleneckRate)
       << ", \"bottleneckDelay\": " << Num(bottleneckDelay) << ", \"accessRate\": " << Num(accessRate)
       << ", \"accessDelays\": " << Array(accDelays) << ", \"accessDelayRx\": " << Num(accessDelayRx)
       << ", \"bufferPackets\": " << bufferPackets << ", \"accessBufferPackets\": " << accessBufferPackets
       << ", \"deviceQueuePackets\": " << deviceQueuePackets << ", \"queueDisc\": " << Str(queueDisc)
       << ", \"minTh\": " << Num(redMinTh) << ", \"maxTh\": " << Num(redMaxTh) << ", \"maxP\": " << Num(redMaxP)
       << ", \"qW\": " << Num(redQW) << ", \"gentle\": " << Bool(redGentle)
       << ", \"packetMode\": " << Bool(redPacketMode) << ", \"wait\": " << Bool(redWait)
       << ", \"meanPktSize\": " << redMeanPktSize << ", \"redUseEcn\": " << Bool(redUseEcn)
       << ", \"redHardDrop\": " << Bool(redHardDrop) << ", \"aredAuto\": " << Bool(aredAuto)
       << ", \"aredAdaptMaxP\": " << Bool(aredAdaptMaxP) << ", \"aredFeng\": " << Bool(aredFeng)
       << ", \"aredTargetDelay\": " << Num(aredTargetDelay) << ", \"aredInterval\": " << Num(aredInterval)
       << ", \"aredTop\": " << Num(aredTop) << ", \"aredBottom\": " << Num(aredBottom)
       << ", \"aredAlpha\": " << Num(aredAlpha) << ", \"aredBeta\": " << Num(aredBeta)
       << ", \"aredRtt\": " << Num(aredRtt) << ", \"pieTarget\": " << Num(pieTarget)
       << ", \"pieTupdate\": " << Num(pieTupdate) << ", \"pieMaxBurst\": " << Num(pieMaxBurst)
       << ", \"pieDqRate\": " << Bool(pieDqRate) << ", \"codelTarget\": " << Num(codelTarget)
       << ", \"codelInterval\": " << Num(codelInterval) << ", \"fqFlows\": " << fqFlows
       << ", \"fqQuantum\": " << fqQuantum << ", \"fqDropBatch\": " << fqDropBatch
       << ", \"fqMinBytes\": " << fqMinBytes << ", \"fqUseEcn\": " << Bool(fqUseEcn)
       << ", \"tcp\": " << Str(tcpTypeName)
       << ", \"recovery\": " << Str(recovery) << ", \"mss\": " << mss << ", \"initialCwnd\": " << initialCwnd
       << ", \"delAckCount\": " << delAckCount << ", \"delAckTimeout\": " << Num(delAckTimeout)
       << ", \"sack\": " << Bool(sack) << ", \"windowScaling\": " << Bool(windowScaling)
       << ", \"timestamps\": " << Bool(timestamps) << ", \"minRto\": " << Num(minRto)
       << ", \"initialRto\": " << Num(initialRto) << ", \"clockGranularity\": " << Num(clockGranularity)
       << ", \"dataRetries\": " << dataRetries << ", \"rcvBuf\": " << rcvBuf << ", \"sndBuf\": " << sndBuf
       << ", \"limitedTransmit\": " << Bool(limitedTransmit) << ", \"pacing\": " << Bool(pacing)
       << ", \"ecn\": " << Bool(ecn) << ", \"errorRate\": " << Num(errorRate)
       << ", \"duration\": " << Num(duration) << ", \"sampleInterval\": " << Num(sampleInterval)
       << ", \"warmup\": " << Num(warmup) << ", \"startSpread\": " << Num(startSpread)
       << ", \"startTimes\": " << Str(startTimes)
       << ", \"seed\": " << seed << ", \"run\": " << run << ", \"cwndLog\": " << Bool(cwndLog)
       << ", \"attrs\": " << Str(attrs) << ", \"out\": " << Str(out) << "},\n";
    js << "  \"derived\": {\"ip_packet_bytes\": " << ipPktSize << ", \"wire_packet_bytes\": " << ipPktSize + 2
       << ", \"mtu\": " << mtu << ", \"queue_limit\": " << Str(QueueLimitString(qlimit)) << "},\n";
    js << "  \"flows\": " << flows.str() << ",\n";
    js << "  \"aggregate\": {\"bytes_received\": " << totalRx << ", \"goodput_bps\": " << Num(totalRx * 8.0 / duration)
       << ", \"jain_index\": " << Num(jain) << "},\n";
    js << "  \"bottleneck\": {\n";
    js << "    \"tx_packets\": " << g_btlTxPackets << ",\n";
    js << "    \"tx_bytes_wire\": " << g_btlTxBytes << ",\n";
    js << "    \"tx_bytes_ip\": " << g_btlTxIpBytes << ",\n";
    js << "    \"utilization\": " << Num(g_btlTxBytes * 8.0 / (bottleneckRate * duration)) << ",\n";
    js << "    \"utilization_ip\": " << Num(g_btlTxIpBytes * 8.0 / (bottleneckRate * duration)) << ",\n";
    js << "    \"drops\": " << g_qdiscDrops << ",\n";
    js << "    \"qdisc_stats\": {\"enqueued\": " << qs.nTotalEnqueuedPackets
       << ", \"dequeued\": " << qs.nTotalDequeuedPackets << ", \"dropped\": " << qs.nTotalDroppedPackets
       << ", \"dropped_before_enqueue\": " << qs.nTotalDroppedPacketsBeforeEnqueue
       << ", \"dropped_after_dequeue\": " << qs.nTotalDroppedPacketsAfterDequeue
       << ", \"marked\": " << qs.nTotalMarkedPackets << ", \"drop_reasons\": {";
    {
        bool first = true;
        for (const auto& [k, v] : dropReasons)
        {
            js << (first ? "" : ", ") << Str(k) << ": " << v;
            first = false;
        }
    }
    js << "}},\n";
    js << "    \"marks\": " << g_qdiscMarks << ",\n";
    js << "    \"device_queue_drops\": " << g_devDrops << ",\n";
    js << "    \"tc_drops\": " << g_tcDrops << ",\n";
    js << "    \"error_model_drops\": " << g_errorDrops << ",\n";
    js << "    \"access_drops\": " << g_accessDrops << ",\n";
    js << "    \"queue_mean_pkts\": " << Num(qAll.mean) << ",\n";
    js << "    \"queue_std_pkts\": " << Num(qAll.std) << ",\n";
    js << "    \"queue_mean_pkts_after_warmup\": " << Num(qWarm.mean) << ",\n";
    js << "    \"queue_std_pkts_after_warmup\": " << Num(qWarm.std) << ",\n";
    js << "    \"queue_incl_device_mean_pkts\": " << Num(qTot.mean) << ",\n";
    js << "    \"queue_incl_device_std_pkts\": " << Num(qTot.std) << ",\n";
    js << "    \"drop_times_s\": " << Array(g_dropTimes) << "\n";
    js << "  },\n";
    js << "  \"queue_series\": {\"t_s\": " << Array(g_sampleT) << ",\n    \"qdisc_packets\": " << Array(g_sampleQdiscPkts)
       << ",\n    \"qdisc_bytes\": " << Array(g_sampleQdiscBytes) << ",\n    \"device_packets\": "
       << Array(g_sampleDevPkts) << ",\n    \"tx_bytes_wire_cum\": " << Array(g_sampleTxWire)
       << ",\n    \"tx_bytes_ip_cum\": " << Array(g_sampleTxIp) << ",\n    \"drops_cum\": " << Array(g_sampleDrops)
       << ",\n    \"arrivals_cum\": " << Array(g_sampleArrivals) << ",\n    \"error_drops_cum\": "
       << Array(g_sampleErrDrops) << ",\n    \"marks_cum\": " << Array(g_sampleMarks)
       << ",\n    \"rx_bytes_cum\": [";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        js << (i ? ",\n      " : "\n      ") << Array(g_sampleRx[i]);
    }
    js << "]},\n";
    js << "  \"cwnd_samples\": {\"t_s\": " << Array(g_sampleT) << ", \"cwnd_bytes\": [";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        js << (i ? ",\n    " : "\n    ") << Array(g_sampleCwnd[i]);
    }
    js << "]},\n";
    js << "  \"cwnd_flow0\": {\"t_s\": " << Array(g_cwndT) << ",\n    \"cwnd_bytes\": " << Array(g_cwndV) << "},\n";
    js << "  \"wall_clock_s\": " << Num(wall) << ",\n";
    js << "  \"setup_cpu_s\": " << Num(cpu0) << ",\n";
    js << "  \"run_cpu_s\": " << Num(cpuRun) << ",\n";
    js << "  \"bottleneck_tx_packets\": " << g_btlTxPackets << "\n";
    js << "}\n";

    g_sinks.clear();
    Simulator::Destroy();

    std::ofstream f(out);
    if (!f)
    {
        Fail("cannot write " + out);
    }
    f << js.str();
    f.close();
    std::cerr << "dumbbell: wrote " << out << " (wall " << std::fixed << std::setprecision(2) << wall << " s, "
              << g_btlTxPackets << " bottleneck packets)" << std::endl;
    return 0;
}
