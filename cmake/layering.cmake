# The layers of gpuolap, lowest first (ARCHITECTURE.md). A library may link
# only libraries of its own or a lower layer; configuring fails otherwise,
# naming the link. Third-party targets (names without the gpuolap_ prefix)
# are not checked.
set(GPUOLAP_LAYERS
  "gpuolap_headers"
  "gpuolap_core"
  "gpuolap_formats"
  "gpuolap_storage"
  "gpuolap_table"
  "gpuolap_gpu_runtime"
  "gpuolap_gpu_primitives"
  "gpuolap_molap_planning gpuolap_cdp gpuolap_molap_gpu gpuolap_groupby_model gpuolap_groupby_gpu gpuolap_htree_gpu"
  "gpuolap_cube_model gpuolap_cube_gpu"
  "gpuolap_molap gpuolap_groupby gpuolap_cube gpuolap_htree"
  "gpuolap_olap gpuolap_generate gpuolap_sql"
  "gpuolap_server"
  "gpuolap gpuolap_python"
)

function(gpuolap_layer_of target out)
  set(level 0)
  foreach(layer IN LISTS GPUOLAP_LAYERS)
    string(REPLACE " " ";" members "${layer}")
    if(target IN_LIST members)
      set(${out} ${level} PARENT_SCOPE)
      return()
    endif()
    math(EXPR level "${level} + 1")
  endforeach()
  set(${out} -1 PARENT_SCOPE)
endfunction()

# Fails when a gpuolap library links one of a higher layer, or is missing
# from the table.
function(gpuolap_check_layering)
  foreach(layer IN LISTS GPUOLAP_LAYERS)
    string(REPLACE " " ";" members "${layer}")
    foreach(target IN LISTS members)
      if(NOT TARGET ${target})
        continue()
      endif()
      gpuolap_layer_of(${target} mine)
      get_target_property(links ${target} LINK_LIBRARIES)
      get_target_property(interface_links ${target} INTERFACE_LINK_LIBRARIES)
      foreach(link IN LISTS links interface_links)
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" link "${link}")
        if(NOT link MATCHES "^gpuolap")
          continue()
        endif()
        gpuolap_layer_of(${link} theirs)
        if(theirs EQUAL -1)
          message(FATAL_ERROR "layering: ${link} (linked by ${target}) is in no layer of cmake/layering.cmake")
        endif()
        if(theirs GREATER mine)
          message(FATAL_ERROR "layering: ${target} links ${link}, a higher layer (cmake/layering.cmake, ARCHITECTURE.md)")
        endif()
      endforeach()
    endforeach()
  endforeach()
endfunction()
