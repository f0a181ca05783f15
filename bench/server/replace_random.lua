-- wrk: cell/replace adding 1 to a base cell drawn from the paths (one JSON
-- array a line) in the file named by $PATHS.
local paths = {}
for line in io.lines(os.getenv("PATHS")) do paths[#paths + 1] = line end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  local body = '{"mode": "add", "value": 1, "path": ' .. paths[math.random(#paths)] .. '}'
  return wrk.format(nil, "/cell/replace", nil, body)
end
