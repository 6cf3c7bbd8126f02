#include "scheduler/planning/layout_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "core/error.h"

namespace mxlite {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Single-node polishing moves strictly lower the cost, so they end; this bounds rounding loops.
constexpr int kMaxPolishPasses = 100;

std::string NodeLabel(const LayoutProblem& problem, int node) {
  std::ostringstream out;
  out << "node " << node;
  if (node >= 0 && node < static_cast<int>(problem.nodes.size()) &&
      !problem.nodes[node].name.empty()) {
    out << " '" << problem.nodes[node].name << "'";
  }
  return out.str();
}

std::string EdgeLabel(const LayoutProblem& problem, int edge) {
  const LayoutProblem::Edge& e = problem.edges[edge];
  std::ostringstream out;
  out << "edge " << edge << " (" << NodeLabel(problem, e.from) << " -> " << NodeLabel(problem, e.to)
      << ")";
  return out.str();
}

// +infinity means "not allowed"; NaN and -infinity would make sums meaningless (inf + -inf).
bool IsValidCost(double cost) { return !std::isnan(cost) && cost != -kInfinity; }

bool AllInfinite(const std::vector<double>& costs) {
  return std::all_of(costs.begin(), costs.end(), [](double c) { return c == kInfinity; });
}

// Lowest index on ties, so results do not depend on rounding of equal sums.
int CheapestIndex(const std::vector<double>& costs) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(costs.size()); ++i) {
    if (costs[i] < costs[best]) best = i;
  }
  return best;
}

void ValidateNode(const LayoutProblem& problem, int node) {
  const std::vector<double>& costs = problem.nodes[node].costs;
  MX_CHECK(!costs.empty()) << NodeLabel(problem, node)
                           << " has no candidates; every node needs at least one";
  for (size_t i = 0; i < costs.size(); ++i) {
    MX_CHECK(IsValidCost(costs[i])) << NodeLabel(problem, node) << " candidate " << i << " costs "
                                    << costs[i] << "; costs must be finite or +infinity";
  }
}

void ValidateEdge(const LayoutProblem& problem, int edge) {
  const LayoutProblem::Edge& e = problem.edges[edge];
  const int n = static_cast<int>(problem.nodes.size());
  for (int end : {e.from, e.to}) {
    MX_CHECK(end >= 0 && end < n) << "edge " << edge << " (" << e.from << " -> " << e.to
                                  << ") names node " << end << "; node indices are in [0, " << n
                                  << ")";
  }
  MX_CHECK(e.from != e.to) << EdgeLabel(problem, edge)
                           << " is a self-loop; a node's own costs belong in its cost vector";
  const int rows = static_cast<int>(problem.nodes[e.from].costs.size());
  const int cols = static_cast<int>(problem.nodes[e.to].costs.size());
  MX_CHECK(e.costs.rows() == rows && e.costs.cols() == cols)
      << EdgeLabel(problem, edge) << " has a " << e.costs.rows() << " x " << e.costs.cols()
      << " cost matrix; expected " << rows << " x " << cols
      << " (the candidate counts of its ends)";
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      MX_CHECK(IsValidCost(e.costs.at(i, j)))
          << EdgeLabel(problem, edge) << " entry (" << i << ", " << j << ") is " << e.costs.at(i, j)
          << "; costs must be finite or +infinity";
    }
  }
}

// Names the first term that makes an assignment cost +infinity; empty when it is finite.
std::string FirstInfiniteTerm(const LayoutProblem& problem, const std::vector<int>& choice) {
  std::ostringstream out;
  for (int v = 0; v < static_cast<int>(problem.nodes.size()); ++v) {
    if (problem.nodes[v].costs[choice[v]] == kInfinity) {
      out << NodeLabel(problem, v) << " candidate " << choice[v] << " is not allowed";
      return out.str();
    }
  }
  for (int e = 0; e < static_cast<int>(problem.edges.size()); ++e) {
    const LayoutProblem::Edge& edge = problem.edges[e];
    if (edge.costs.at(choice[edge.from], choice[edge.to]) == kInfinity) {
      out << EdgeLabel(problem, e) << " does not allow candidates (" << choice[edge.from] << ", "
          << choice[edge.to] << ")";
      return out.str();
    }
  }
  return "";
}

// One edge of the problem being reduced; `costs` is [candidates of a] x [candidates of b].
struct WorkingEdge {
  int a = 0;
  int b = 0;
  CostMatrix costs;

  int Other(int node) const { return node == a ? b : a; }
  // The entry when `node` (one end) takes i and the other end takes j.
  double Cost(int node, int i, int j) const { return node == a ? costs.at(i, j) : costs.at(j, i); }
};

// What back-propagation needs to know about one eliminated node. Its cost vector and these edges
// are frozen from then on: reductions only ever change live nodes and edges between live nodes.
struct Elimination {
  int node = 0;
  std::vector<int> edges;  // to the neighbours it had when eliminated
  int fixed_choice = -1;   // set by RN; otherwise the cheapest answer to the neighbours' choices
};

// The problem while it is reduced. Invariants: at most one edge joins two live nodes;
// neighbours_[x] maps each live neighbour of live node x to the edge between them; by_degree_
// holds (degree, node) for exactly the live nodes.
class ReductionGraph {
 public:
  explicit ReductionGraph(const LayoutProblem& problem) : neighbours_(problem.nodes.size()) {
    for (const LayoutProblem::Node& node : problem.nodes) costs_.push_back(node.costs);
    for (int x = 0; x < static_cast<int>(costs_.size()); ++x) by_degree_.insert({0, x});
    for (const LayoutProblem::Edge& edge : problem.edges) AddToEdge(edge.from, edge.to, edge.costs);
  }

  bool Empty() const { return by_degree_.empty(); }
  int LeastDegreeNode() const { return by_degree_.begin()->second; }
  int LargestDegreeNode() const { return by_degree_.rbegin()->second; }
  int Degree(int x) const { return static_cast<int>(neighbours_[x].size()); }
  int CandidateCount(int x) const { return static_cast<int>(costs_[x].size()); }
  std::vector<double>& Costs(int x) { return costs_[x]; }
  const std::vector<double>& Costs(int x) const { return costs_[x]; }
  const WorkingEdge& Edge(int id) const { return edges_[id]; }

  // Edge ids of x's live edges, in neighbour order (deterministic).
  std::vector<int> EdgesOf(int x) const {
    std::vector<int> ids;
    for (const auto& [neighbour, id] : neighbours_[x]) ids.push_back(id);
    return ids;
  }

  // Adds `costs` ([candidates of x] x [candidates of y]) to the edge x-y, creating it if needed.
  void AddToEdge(int x, int y, const CostMatrix& costs) {
    const CostMatrix oriented = x < y ? costs : costs.Transposed();
    const int a = std::min(x, y);
    const int b = std::max(x, y);
    auto found = neighbours_[a].find(b);
    if (found != neighbours_[a].end()) {
      CostMatrix& existing = edges_[found->second].costs;
      for (int i = 0; i < existing.rows(); ++i) {
        for (int j = 0; j < existing.cols(); ++j) existing.at(i, j) += oriented.at(i, j);
      }
      return;
    }
    const int id = static_cast<int>(edges_.size());
    edges_.push_back(WorkingEdge{a, b, oriented});
    Link(a, b, id);
    Link(b, a, id);
  }

  void RemoveEdge(int id) {
    Unlink(edges_[id].a, edges_[id].b);
    Unlink(edges_[id].b, edges_[id].a);
  }

  // Removes x and its edges from the live graph.
  void RemoveNode(int x) {
    for (int id : EdgesOf(x)) RemoveEdge(id);
    by_degree_.erase({0, x});
  }

 private:
  void Link(int x, int y, int id) {
    by_degree_.erase({Degree(x), x});
    neighbours_[x][y] = id;
    by_degree_.insert({Degree(x), x});
  }
  void Unlink(int x, int y) {
    by_degree_.erase({Degree(x), x});
    neighbours_[x].erase(y);
    by_degree_.insert({Degree(x), x});
  }

  std::vector<std::vector<double>> costs_;
  // Never shrinks: the edges of eliminated nodes stay for back-propagation.
  std::vector<WorkingEdge> edges_;
  std::vector<std::map<int, int>> neighbours_;
  std::set<std::pair<int, int>> by_degree_;
};

// An edge to a node with one candidate is a plain cost vector on the other end (its entries do
// not depend on any choice of the single-candidate end), so it is added there and dropped.
int FoldSingleCandidateEdges(ReductionGraph& graph, int node_count) {
  int folded = 0;
  for (int x = 0; x < node_count; ++x) {
    if (graph.CandidateCount(x) != 1) continue;
    for (int id : graph.EdgesOf(x)) {
      const WorkingEdge& edge = graph.Edge(id);
      const int y = edge.Other(x);
      std::vector<double>& y_costs = graph.Costs(y);
      for (int j = 0; j < graph.CandidateCount(y); ++j) y_costs[j] += edge.Cost(x, 0, j);
      graph.RemoveEdge(id);
      ++folded;
    }
  }
  return folded;
}

// x's cheapest answer when the other end of `edge` takes j.
double CheapestAnswer(const ReductionGraph& graph, int x, const WorkingEdge& edge, int j) {
  const std::vector<double>& x_costs = graph.Costs(x);
  double best = kInfinity;
  for (int i = 0; i < static_cast<int>(x_costs.size()); ++i) {
    best = std::min(best, x_costs[i] + edge.Cost(x, i, j));
  }
  return best;
}

// RI: the neighbour's cost for each of its candidates grows by x's cheapest answer to it.
void ReduceDegreeOne(ReductionGraph& graph, int x) {
  const WorkingEdge& edge = graph.Edge(graph.EdgesOf(x)[0]);
  const int y = edge.Other(x);
  std::vector<double> added(graph.CandidateCount(y));
  for (int j = 0; j < graph.CandidateCount(y); ++j) added[j] = CheapestAnswer(graph, x, edge, j);
  for (int j = 0; j < graph.CandidateCount(y); ++j) graph.Costs(y)[j] += added[j];
}

// RII: x's cheapest answer to each pair of its neighbours' candidates becomes an edge between
// them. Call after recording x's edges and before removing x.
CostMatrix DegreeTwoEdge(const ReductionGraph& graph, int x) {
  const std::vector<int> ids = graph.EdgesOf(x);
  const WorkingEdge& to_y = graph.Edge(ids[0]);
  const WorkingEdge& to_z = graph.Edge(ids[1]);
  const int y = to_y.Other(x);
  const int z = to_z.Other(x);
  const std::vector<double>& x_costs = graph.Costs(x);
  CostMatrix answer(graph.CandidateCount(y), graph.CandidateCount(z), kInfinity);
  for (int j = 0; j < answer.rows(); ++j) {
    for (int k = 0; k < answer.cols(); ++k) {
      double best = kInfinity;
      for (int i = 0; i < static_cast<int>(x_costs.size()); ++i) {
        best = std::min(best, x_costs[i] + to_y.Cost(x, i, j) + to_z.Cost(x, i, k));
      }
      answer.at(j, k) = best;
    }
  }
  return answer;
}

// RN: the candidate of x that is cheapest if each neighbour then picks its own best answer.
int HeuristicChoice(const ReductionGraph& graph, int x) {
  std::vector<double> estimate = graph.Costs(x);
  for (int id : graph.EdgesOf(x)) {
    const WorkingEdge& edge = graph.Edge(id);
    const std::vector<double>& y_costs = graph.Costs(edge.Other(x));
    for (int i = 0; i < static_cast<int>(estimate.size()); ++i) {
      double best = kInfinity;
      for (int j = 0; j < static_cast<int>(y_costs.size()); ++j) {
        best = std::min(best, edge.Cost(x, i, j) + y_costs[j]);
      }
      estimate[i] += best;
    }
  }
  return CheapestIndex(estimate);
}

// With x fixed to `choice`, each edge of x is a plain cost vector on its other end.
void FoldFixedChoice(ReductionGraph& graph, int x, int choice) {
  for (int id : graph.EdgesOf(x)) {
    const WorkingEdge& edge = graph.Edge(id);
    std::vector<double>& y_costs = graph.Costs(edge.Other(x));
    for (int j = 0; j < static_cast<int>(y_costs.size()); ++j)
      y_costs[j] += edge.Cost(x, choice, j);
  }
}

// Applies the reductions until no node is left; returns the eliminations in order. The first node
// found with every candidate infinite is reported through `first_infinite_node` (-1 if none).
std::vector<Elimination> Reduce(ReductionGraph& graph, ReductionCounts& counts,
                                int& first_infinite_node) {
  std::vector<Elimination> order;
  while (!graph.Empty()) {
    int x = graph.LeastDegreeNode();
    const int degree = graph.Degree(x);
    if (degree >= 3) x = graph.LargestDegreeNode();
    if (first_infinite_node < 0 && AllInfinite(graph.Costs(x))) first_infinite_node = x;
    Elimination step{x, graph.EdgesOf(x), -1};
    if (degree == 0) {
      ++counts.r0;
    } else if (degree == 1) {
      ReduceDegreeOne(graph, x);
      ++counts.r1;
    } else if (degree == 2) {
      const CostMatrix answer = DegreeTwoEdge(graph, x);
      const int y = graph.Edge(step.edges[0]).Other(x);
      const int z = graph.Edge(step.edges[1]).Other(x);
      graph.RemoveNode(x);
      graph.AddToEdge(y, z, answer);
      ++counts.r2;
    } else {
      step.fixed_choice = HeuristicChoice(graph, x);
      FoldFixedChoice(graph, x, step.fixed_choice);
      ++counts.rn;
    }
    graph.RemoveNode(x);  // no-op when RII already removed it
    order.push_back(std::move(step));
  }
  return order;
}

// In reverse elimination order every neighbour a node had when eliminated is already chosen.
std::vector<int> BackPropagate(const ReductionGraph& graph, const std::vector<Elimination>& order,
                               int node_count) {
  std::vector<int> choice(node_count, -1);
  for (auto step = order.rbegin(); step != order.rend(); ++step) {
    if (step->fixed_choice >= 0) {
      choice[step->node] = step->fixed_choice;
      continue;
    }
    std::vector<double> total = graph.Costs(step->node);
    for (int id : step->edges) {
      const WorkingEdge& edge = graph.Edge(id);
      const int neighbour_choice = choice[edge.Other(step->node)];
      for (int i = 0; i < static_cast<int>(total.size()); ++i) {
        total[i] += edge.Cost(step->node, i, neighbour_choice);
      }
    }
    choice[step->node] = CheapestIndex(total);
  }
  return choice;
}

// A node's share of the total cost with candidate i: its own cost plus its edges' entries.
double NodeShare(const LayoutProblem& problem, const std::vector<std::vector<int>>& incident,
                 const std::vector<int>& choice, int v, int i) {
  double share = problem.nodes[v].costs[i];
  for (int e : incident[v]) {
    const LayoutProblem::Edge& edge = problem.edges[e];
    share +=
        edge.from == v ? edge.costs.at(i, choice[edge.to]) : edge.costs.at(choice[edge.from], i);
  }
  return share;
}

// Moves single nodes to their best candidate given the others while that strictly lowers their
// share. Each move lowers (number of infinite terms, finite sum) lexicographically, so it ends;
// the pass limit only guards against rounding. Returns the number of moves.
int Polish(const LayoutProblem& problem, std::vector<int>& choice) {
  const int n = static_cast<int>(problem.nodes.size());
  std::vector<std::vector<int>> incident(n);
  for (int e = 0; e < static_cast<int>(problem.edges.size()); ++e) {
    incident[problem.edges[e].from].push_back(e);
    incident[problem.edges[e].to].push_back(e);
  }
  int moves = 0;
  for (int pass = 0; pass < kMaxPolishPasses; ++pass) {
    bool moved = false;
    for (int v = 0; v < n; ++v) {
      std::vector<double> share(problem.nodes[v].costs.size());
      for (int i = 0; i < static_cast<int>(share.size()); ++i) {
        share[i] = NodeShare(problem, incident, choice, v, i);
      }
      const int best = CheapestIndex(share);
      if (share[best] < share[choice[v]]) {
        choice[v] = best;
        moved = true;
        ++moves;
      }
    }
    if (!moved) break;
  }
  return moves;
}

// Fills total_cost and feasible from `choice`; when infinite, `infeasibility` reads
// "<headline>[: <reason>]; e.g. <first infinite term>".
void Score(const LayoutProblem& problem, const std::string& headline, const std::string& reason,
           LayoutSolution& solution) {
  solution.total_cost = AssignmentCost(problem, solution.choice);
  solution.feasible = solution.total_cost != kInfinity;
  if (solution.feasible) return;
  std::ostringstream out;
  out << headline;
  if (!reason.empty()) out << ": " << reason;
  out << "; e.g. " << FirstInfiniteTerm(problem, solution.choice);
  solution.infeasibility = out.str();
}

}  // namespace

CostMatrix::CostMatrix(int rows, int cols, double fill)
    : rows_(rows), cols_(cols), values_(static_cast<size_t>(rows) * cols, fill) {
  MX_CHECK(rows >= 0 && cols >= 0) << "cost matrix size " << rows << " x " << cols;
}

CostMatrix CostMatrix::FromRows(const std::vector<std::vector<double>>& rows) {
  const int cols = rows.empty() ? 0 : static_cast<int>(rows[0].size());
  CostMatrix matrix(static_cast<int>(rows.size()), cols);
  for (int i = 0; i < matrix.rows(); ++i) {
    MX_CHECK_EQ(static_cast<int>(rows[i].size()), cols)
        << "cost matrix row " << i << " has " << rows[i].size() << " entries; row 0 has " << cols;
    for (int j = 0; j < cols; ++j) matrix.at(i, j) = rows[i][j];
  }
  return matrix;
}

CostMatrix CostMatrix::Transposed() const {
  CostMatrix result(cols_, rows_);
  for (int i = 0; i < rows_; ++i) {
    for (int j = 0; j < cols_; ++j) result.at(j, i) = at(i, j);
  }
  return result;
}

int LayoutProblem::AddNode(std::string name, std::vector<double> costs) {
  nodes.push_back(Node{std::move(name), std::move(costs)});
  return static_cast<int>(nodes.size()) - 1;
}

void LayoutProblem::AddEdge(int from, int to, CostMatrix costs) {
  edges.push_back(Edge{from, to, std::move(costs)});
}

void LayoutProblem::AddEdge(int from, int to, const std::vector<std::vector<double>>& rows) {
  AddEdge(from, to, CostMatrix::FromRows(rows));
}

std::string ReductionCounts::ToString() const {
  std::ostringstream out;
  out << "R0 " << r0 << ", RI " << r1 << ", RII " << r2 << ", RN " << rn
      << ", single-candidate edges " << single_candidate_edges << ", polish moves " << polish_moves;
  return out.str();
}

void ValidateLayoutProblem(const LayoutProblem& problem) {
  for (int v = 0; v < static_cast<int>(problem.nodes.size()); ++v) ValidateNode(problem, v);
  for (int e = 0; e < static_cast<int>(problem.edges.size()); ++e) ValidateEdge(problem, e);
}

LayoutSolution SolveLayoutProblem(const LayoutProblem& problem) {
  ValidateLayoutProblem(problem);
  const int n = static_cast<int>(problem.nodes.size());
  LayoutSolution solution;
  ReductionGraph graph(problem);
  solution.reductions.single_candidate_edges = FoldSingleCandidateEdges(graph, n);
  int first_infinite_node = -1;
  const std::vector<Elimination> order = Reduce(graph, solution.reductions, first_infinite_node);
  solution.choice = BackPropagate(graph, order, n);
  solution.proven_optimal = solution.reductions.rn == 0;
  if (!solution.proven_optimal) solution.reductions.polish_moves = Polish(problem, solution.choice);
  std::string reason;
  if (first_infinite_node >= 0) {
    reason = NodeLabel(problem, first_infinite_node) +
             " has every candidate at +infinity once the nodes eliminated before it are folded in";
  }
  Score(problem,
        solution.proven_optimal
            ? "no finite-cost assignment exists"
            : "no finite-cost assignment found (the RN heuristic was used; one may still exist)",
        reason, solution);
  return solution;
}

LayoutSolution LocalLayoutSolution(const LayoutProblem& problem) {
  ValidateLayoutProblem(problem);
  LayoutSolution solution;
  for (const LayoutProblem::Node& node : problem.nodes) {
    solution.choice.push_back(CheapestIndex(node.costs));
  }
  solution.proven_optimal = problem.edges.empty();
  Score(problem, "the local choice costs +infinity", "", solution);
  return solution;
}

double AssignmentCost(const LayoutProblem& problem, const std::vector<int>& choice) {
  MX_CHECK_EQ(choice.size(), problem.nodes.size()) << "an assignment needs one choice per node";
  for (int v = 0; v < static_cast<int>(choice.size()); ++v) {
    MX_CHECK(choice[v] >= 0 && choice[v] < static_cast<int>(problem.nodes[v].costs.size()))
        << NodeLabel(problem, v) << " is assigned candidate " << choice[v] << " of "
        << problem.nodes[v].costs.size();
  }
  double total = 0.0;
  for (int v = 0; v < static_cast<int>(choice.size()); ++v) {
    total += problem.nodes[v].costs[choice[v]];
  }
  for (const LayoutProblem::Edge& edge : problem.edges) {
    total += edge.costs.at(choice[edge.from], choice[edge.to]);
  }
  return total;
}

}  // namespace mxlite
