// Lab 00's hello world as a GLSL compute shader (Vulkan; for OpenGL 4.3+ see the comment on `n`).
// The host binds three storage buffers, sets n, and dispatches ceil(n / 256) workgroups:
// vkCmdDispatch(cmd, (n + 255) / 256, 1, 1) or glDispatchCompute((n + 255) / 256, 1, 1).
// GLSL has no 8-bit type without extensions: one int per character, as in the C++ AMP version.
// --8<-- [start:hello]
#version 450
layout(local_size_x = 256) in;  // the workgroup (block) size, fixed in the shader

layout(std430, binding = 0) readonly buffer Text { int text[]; };
layout(std430, binding = 1) readonly buffer Offsets { int offsets[]; };
layout(std430, binding = 2) writeonly buffer Result { int result[]; };
layout(push_constant) uniform Size { int n; };  // OpenGL: layout(location = 0) uniform int n;

void main() {
  uint i = gl_GlobalInvocationID.x;  // = gl_WorkGroupID.x * 256 + gl_LocalInvocationID.x
  if (i < uint(n)) result[i] = text[i] + offsets[i];
}
// --8<-- [end:hello]
