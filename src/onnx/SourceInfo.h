// Recovers the user's source location and module path from what exporters
// record on ONNX nodes: torch.onnx's metadata_props (pkg.torch.onnx.*), stack
// traces in doc_string, and scope-style node names (/layer1/layer1.0/conv1/Conv).
#pragma once

#include "graphlint/ir/Graph.h"

#include <optional>
#include <string>
#include <vector>

namespace graphlint::onnxio {

/// "layer1.0.conv1" from "/layer1/layer1.0/conv1/Conv"; empty if not scoped.
std::string modulePathFromScopedName(llvm::StringRef nodeName);
/// Fills n.loc and n.modulePath from metadata, doc string and name.
void recoverSourceInfo(Node &n);
/// torch 2.x's dynamo exporter (torch.onnx.export(..., dynamo=True)) writes
/// `pkg.torch.onnx.name_scopes` ("['', 'block', 'block.fc', 'linear']": the
/// module scopes, then the FX node's own name) beside
/// `pkg.torch.onnx.class_hierarchy` (the classes of those scopes, the op
/// last). Returns the module path ("block.fc", "" for the root module), or
/// nullopt when the node carries no dynamo scopes.
std::optional<std::string> dynamoModulePath(const Node &n);
/// Every module scope of a dynamo export's node, outermost first (the root
/// module's "" included, the node's own op name not): the modules whose
/// forwards were running, one per frame of its stack trace.
std::optional<std::vector<std::string>> dynamoModuleScopes(const Node &n);
/// The classes of those scopes ("transformers.models.llama.modeling_llama.
/// LlamaAttention"), one per scope; empty when the node does not list them.
std::vector<std::string> dynamoModuleClasses(const Node &n);

}  // namespace graphlint::onnxio
