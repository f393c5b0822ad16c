// The version the `gpurent` binary reports (`gpurent version`, User-Agent). The build defines
// GPURENT_VERSION from the CMake project version when it can; the fallback matches CMakeLists.txt.
#pragma once

namespace gpurent {

#ifdef GPURENT_VERSION
inline constexpr const char* kGpurentVersion = GPURENT_VERSION;
#else
inline constexpr const char* kGpurentVersion = "0.1.0";
#endif

}  // namespace gpurent
