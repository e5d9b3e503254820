// The grouping pass, fingerprints and long-message splitting
// (src/engine/Grouping.cpp, src/base/Diagnostic.cpp): what a user reads as "one
// finding per cause" and what a baseline keeps matched across re-exports.
#include "graphlint/engine/Grouping.h"
#include "graphlint/ir/LibrarySource.h"
#include "graphlint/report/Reporters.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace graphlint;

namespace {

// GL131 on `h.relu_()` at model.py:19:9 in layer `i`, node #(10 i + 5).
Diagnostic layerFinding(unsigned i, unsigned line = 19) {
  Diagnostic d;
  d.code = "GL131";
  d.name = "inplace-alias";
  d.severity = Severity::Warning;
  d.message = fmt::format("in-place aten::relu_ 'relu__{}' overwrites 'addmm_{}' (node #{})", i, i, 10 * i + 5);
  d.location.file = "layers.fx.json";
  d.location.graphPath = "main";
  d.location.nodeName = fmt::format("relu__{}", i);
  d.location.opType = "aten::relu_";
  d.location.nodeIndex = 10 * i + 5;
  d.location.source = {"model.py", line, 9, "forward"};
  d.location.modulePath = fmt::format("blocks.{}", i);
  d.notes.push_back({"use relu", std::nullopt});
  return d;
}

}  // namespace

TEST(Grouping, OneLineInEveryLayerIsOneFindingWithTheLayers) {
  std::vector<Diagnostic> diags;
  for (unsigned i = 0; i < 24; ++i)
    diags.push_back(layerFinding(i));
  groupDiagnostics(diags);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].count(), 24u);
  EXPECT_EQ(diags[0].location.modulePath, "blocks.0");  // the first in graph order leads
  EXPECT_EQ(diags[0].alsoAt.back().modulePath, "blocks.23");
  EXPECT_EQ(occurrencesLine(diags[0]), "in 24 layers: blocks.0 ... blocks.23");
  EXPECT_EQ(diags[0].notes.size(), 1u);  // the members' notes are not repeated
}

TEST(Grouping, DifferentLinesRulesOrCausesStayApart) {
  std::vector<Diagnostic> diags{layerFinding(0), layerFinding(1, 20), layerFinding(2)};
  Diagnostic other = layerFinding(3);
  other.code = "GL132";
  diags.push_back(other);
  Diagnostic cause = layerFinding(4);
  cause.message = "in-place aten::relu_ 'relu__4' overwrites a graph input";
  diags.push_back(cause);
  groupDiagnostics(diags);
  ASSERT_EQ(diags.size(), 4u);
  EXPECT_EQ(diags[0].count(), 2u);  // layers 0 and 2: same line, same cause
  EXPECT_EQ(occurrencesLine(diags[0]), "in 2 layers: blocks.0 and blocks.2");
  EXPECT_EQ(diags[1].count(), 1u);
  EXPECT_EQ(occurrencesLine(diags[1]), "");
}

TEST(Grouping, NumbersInTheMessageDoNotSplitACause) {
  std::vector<Diagnostic> diags{layerFinding(0), layerFinding(1)};
  diags[0].message = "18 consecutive kernels from mm 'mm_109' to t 't_141' are launch-bound";
  diags[1].message = "20 consecutive kernels from mm 'mm_189' to t 't_301' are launch-bound";
  groupDiagnostics(diags);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].message, "18 consecutive kernels from mm 'mm_109' to t 't_141' are launch-bound");
}

TEST(Grouping, WithoutASourceLineTheModuleTemplateIsThePlace) {
  std::vector<Diagnostic> diags;
  for (unsigned i = 0; i < 3; ++i) {
    Diagnostic d = layerFinding(i);
    d.location.source = SourceLoc();
    d.location.modulePath = fmt::format("encoder.layer.{}.attn", i);
    diags.push_back(d);
  }
  Diagnostic lone = layerFinding(5);
  lone.location.source = SourceLoc();
  lone.location.modulePath.clear();
  diags.push_back(lone);
  groupDiagnostics(diags);
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_EQ(occurrencesLine(diags[0]), "in 3 layers: encoder.layer.0.attn ... encoder.layer.2.attn");
}

TEST(Grouping, GL001FindingsAreNeverFolded) {
  std::vector<Diagnostic> diags{layerFinding(0), layerFinding(1)};
  for (Diagnostic &d : diags) {
    d.code = "GL001";
    d.name = "invalid-model";
  }
  groupDiagnostics(diags);
  EXPECT_EQ(diags.size(), 2u);
}

TEST(Grouping, SeveralNodesOfOneModuleAreCountedAsTimes) {
  std::vector<Diagnostic> diags{layerFinding(0), layerFinding(1), layerFinding(2)};
  diags[1].location.modulePath = "blocks.0";
  diags[2].location.modulePath = "head";
  groupDiagnostics(diags);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(occurrencesLine(diags[0]), "3 times in 2 modules: blocks.0, head");
}

TEST(Fingerprint, StableAcrossNodeNamesIndicesAndLinesNotAcrossFilesModulesOps) {
  Diagnostic a = layerFinding(3);
  Diagnostic b = a;
  b.location.nodeName = "relu__17";  // re-exported: torch numbers the nodes anew
  b.location.nodeIndex = 99;
  b.location.source.line = 25;       // an edit above moved the line
  b.message = "other words";
  EXPECT_EQ(fingerprintOf(a), fingerprintOf(b));
  EXPECT_EQ(fingerprintOf(a).size(), 16u);
  b.location.modulePath = "blocks.7";  // another layer of the same block: the same finding
  EXPECT_EQ(fingerprintOf(a), fingerprintOf(b));
  b.location.modulePath = "head";
  EXPECT_NE(fingerprintOf(a), fingerprintOf(b));
  b = a;
  b.location.source.file = "other.py";
  EXPECT_NE(fingerprintOf(a), fingerprintOf(b));
  b = a;
  b.location.opType = "aten::add_";
  EXPECT_NE(fingerprintOf(a), fingerprintOf(b));
  // Without a source file or module (ONNX without exporter metadata) the
  // node's own name is all there is.
  Diagnostic o;
  o.code = "GL002";
  o.location.graphPath = "main";
  o.location.nodeName = "n";
  o.location.opType = "Foo";
  Diagnostic p = o;
  p.location.nodeName = "m";
  EXPECT_NE(fingerprintOf(o), fingerprintOf(p));
}

TEST(Fingerprint, ModuleTemplateFoldsWholeNumberComponents) {
  EXPECT_EQ(moduleTemplate("blocks.3.attn.proj"), "blocks.{N}.attn.proj");
  EXPECT_EQ(moduleTemplate("layer1.0.conv3x3"), "layer1.{N}.conv3x3");
  EXPECT_EQ(moduleTemplate("/encoder/layer.11/attn"), "/encoder/layer.{N}/attn");
  EXPECT_EQ(moduleTemplate(""), "");
}

TEST(Grouping, LongMessagesKeepAShortFirstLine) {
  std::vector<Diagnostic> diags(2);
  diags[0].message = "6 consecutive kernels from clone 'clone' to t 't_98' are launch-bound on H100-SXM: together they "
                     "are predicted to run 7.1 us on the GPU but cost 24.0 us of launch overhead; capture them";
  diags[0].notes.push_back({"existing", std::nullopt});
  diags[1].message = std::string(130, 'x');  // no clause break: left whole
  // The first break past the limit when there is none within it.
  diags.push_back(Diagnostic());
  diags[2].message = std::string(140, 'y') + ": the rest; and more";
  splitLongMessages(diags);
  EXPECT_EQ(diags[2].message, std::string(140, 'y'));
  EXPECT_EQ(diags[2].notes[0].message, "the rest; and more");
  EXPECT_EQ(diags[0].message, "6 consecutive kernels from clone 'clone' to t 't_98' are launch-bound on H100-SXM");
  ASSERT_EQ(diags[0].notes.size(), 2u);
  EXPECT_EQ(diags[0].notes[0].message.rfind("together they are predicted", 0), 0u);
  EXPECT_EQ(diags[1].message.size(), 130u);
}

// The README's first command: GL121 on a Loop whose sizes are "(body: 6
// node(s))" printed "(body (dynamic-control-flow)" and a note "6 node(s))".
TEST(Grouping, LongMessagesAreNeverCutInsideBracketsOrQuotes) {
  std::vector<Diagnostic> diags(2);
  diags[0].message = "Loop '/Loop' splits the graph: fusion cannot cross it; it has a dynamic trip count from "
                     "graph input 'n' (body: 6 node(s))";
  diags[1].message = "a node named 'x: y; z' and a rank's [shard: 1 of 8] figures, long enough to be split at "
                     "some point after all of them; here";
  splitLongMessages(diags);
  EXPECT_EQ(diags[0].message, "Loop '/Loop' splits the graph: fusion cannot cross it");
  ASSERT_EQ(diags[0].notes.size(), 1u);
  EXPECT_EQ(diags[0].notes[0].message, "it has a dynamic trip count from graph input 'n' (body: 6 node(s))");
  EXPECT_EQ(diags[1].message, "a node named 'x: y; z' and a rank's [shard: 1 of 8] figures, long enough to be "
                              "split at some point after all of them");
  EXPECT_EQ(diags[1].notes[0].message, "here");
}

TEST(TextLayout, GraphLocationNamesTheModuleFirst) {
  Diagnostic d = layerFinding(3);
  EXPECT_EQ(graphLocationText(d.location, true), "blocks.3: node #36 'relu__3' (aten::relu_) in layers.fx.json");
  EXPECT_EQ(graphLocationText(d.location, false), "blocks.3: node #36 'relu__3' (aten::relu_)");
  EXPECT_EQ(primaryPositionText(d.location), "model.py:19:9");
  d.location.source.col = 0;
  EXPECT_EQ(primaryPositionText(d.location), "model.py:19");
  d.location.source = SourceLoc();
  EXPECT_EQ(primaryPositionText(d.location), "layers.fx.json");
}

// The user trial's buggy.py with its backward traced (issue 42 item 2): the
// cast at line 21 and its gradient, the cast back, recorded at 21 col 0.
TEST(Grouping, BackwardCopyOfAForwardFindingFoldsIntoIt) {
  Diagnostic fwd = layerFinding(0, 21);
  fwd.code = "GL101";
  fwd.message = "'_to_copy' (_to_copy) changes precision f32 -> f16 between compute ops";
  Diagnostic bwd = fwd;
  bwd.message = "'_to_copy_4' (_to_copy) changes precision f16 -> f32 between compute ops";
  bwd.location.source.col = 0;
  bwd.location.backward = true;
  bwd.location.nodeIndex = 80;
  Diagnostic lone = bwd;  // a backward finding with no forward one at its line stays
  lone.location.source.line = 40;
  lone.location.nodeIndex = 90;
  std::vector<Diagnostic> diags{fwd, bwd, lone};
  groupDiagnostics(diags);
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_FALSE(diags[0].location.backward);
  EXPECT_EQ(diags[0].count(), 2u);
  EXPECT_TRUE(diags[0].alsoAt[0].backward);
  EXPECT_EQ(diags[1].location.source.line, 40u);
  // Another rule at the line is not a copy of the finding.
  Diagnostic other = bwd;
  other.code = "GL123";
  std::vector<Diagnostic> apart{fwd, other};
  groupDiagnostics(apart);
  EXPECT_EQ(apart.size(), 2u);
}

TEST(LibrarySource, SitePackagesAndTheStandardLibraryAreLibraries) {
  EXPECT_EQ(libraryOf("/venv/lib/python3.11/site-packages/transformers/models/mixtral/modeling_mixtral.py"),
            "transformers");
  EXPECT_EQ(libraryOf("/usr/lib/python3/dist-packages/six.py"), "six");
  EXPECT_EQ(libraryOf("/usr/lib/python3.11/json/decoder.py"), "python");
  EXPECT_EQ(libraryOf("models/site-packages/mine.py"), "");  // relative: inside the user's repository
  EXPECT_EQ(libraryOf("/home/me/repo/model.py"), "");
  EXPECT_EQ(libraryOf(SourceLoc{}), "");
}

TEST(Grouping, LibraryFindingsFoldIntoOnePerRuleAndLibrary) {
  auto at = [](const char *file, unsigned line, const char *code, Severity sev = Severity::Warning) {
    Diagnostic d = layerFinding(line, line);
    d.code = code;
    d.name = code == std::string("GL142") ? "launch-bound" : "host-sync";
    d.severity = sev;
    d.location.source.file = file;
    return d;
  };
  const char *mixtral = "/v/lib/python3.11/site-packages/transformers/models/mixtral/modeling_mixtral.py";
  const char *moe = "/v/lib/python3.11/site-packages/transformers/integrations/moe.py";
  const char *timm = "/v/lib/python3.11/site-packages/timm/layers/norm.py";
  std::vector<Diagnostic> diags{at("model.py", 3, "GL142"), at(mixtral, 10, "GL142"), at(moe, 20, "GL142"),
                                at(timm, 30, "GL142"),      at(mixtral, 40, "GL112"),
                                at(mixtral, 50, "GL132", Severity::Error)};
  foldLibraryFindings(diags);
  ASSERT_EQ(diags.size(), 5u);
  EXPECT_EQ(diags[0].location.source.file, "model.py");  // the user's own line: untouched
  EXPECT_EQ(diags[0].count(), 1u);
  EXPECT_EQ(diags[1].count(), 2u);                       // transformers' two GL142, two files
  EXPECT_EQ(diags[1].location.source.line, 10u);
  EXPECT_NE(diags[1].message.find("2 launch-bound findings in library code (transformers, 2 files)"),
            std::string::npos)
      << diags[1].message;
  EXPECT_NE(diags[1].message.find("--show-library-findings"), std::string::npos);
  EXPECT_EQ(diags[2].count(), 1u);                       // timm: another library
  EXPECT_NE(diags[2].message.find("(timm, 1 file)"), std::string::npos);
  EXPECT_EQ(diags[3].code, "GL112");                     // another rule
  EXPECT_EQ(diags[4].code, "GL132");                     // an error is never folded
  EXPECT_EQ(diags[4].message.find("library code"), std::string::npos);
}
