-- Command labctl-ghc-peer runs one labctl benchmark kernel (skynet or ping_pong) on GHC's threaded
-- runtime, forkIO threads and MVars, and reports how long it took.
--
-- Protocol: labctl writes one JSON request {"kernel": ..., "params": {...}} on stdin; the program
-- sets the RTS's capabilities to `threads`, runs the kernel once, verifies its answer and prints
-- one JSON line {"elapsed_ns", "messages", "answer", "metrics"} on stdout, exit 0. Bad input: a
-- one-line message on stderr, nothing on stdout, exit 2; a wrong answer: the same, exit 1.
module Main (main) where

import Control.Concurrent (runInUnboundThread, setNumCapabilities)
import Control.Monad (forM, forM_, unless, when)
import Data.Char (isSpace)
import Data.List (stripPrefix)
import System.Environment (lookupEnv)
import System.IO (hFlush, hSetBinaryMode, stdin, stdout)

import PingPong (pingPong)
import Protocol
import Skynet (skynet)

-- One integer parameter: its name, default and allowed range (our kernel's schema).
data Param = Param String Integer Integer Integer

-- Each kernel's parameters and the function that runs it, given them in that order.
kernels :: [(String, ([Param], [Int] -> Maybe String -> IO Reply))]
kernels =
  [ ( "skynet"
    , ( [Param "leaves" 1000000 1 100000000, Param "branching" 10 2 1000000, threads]
      , \values fault -> case values of
          [leaves, branching, _] -> skynet leaves branching fault
          _ -> badInput "skynet: internal error: parameters out of step"
      )
    )
  , ( "ping_pong"
    , ( [Param "messages" 10000000 2 10000000000, Param "latency_samples" 10000 0 10000000, threads]
      , \values fault -> case values of
          [messages', probes, _] -> pingPong messages' probes fault
          _ -> badInput "ping_pong: internal error: parameters out of step"
      )
    )
  ]
  where
    threads = Param "threads" 1 1 1024

-- The request's kernel and its parameters, every one given or defaulted, in range.
parse :: String -> IO (String, [(String, Int)])
parse input = do
  request <- either (\e -> badInput ("bad request: " ++ e)) return (parseJson input)
  members <- case request of
    Object ms -> return ms
    _ -> badInput "bad request: not a JSON object"
  forM_ (map fst members) $ \key ->
    unless (key `elem` ["kernel", "params"]) $ badInput ("bad request: unknown field " ++ show key)
  name <- case lookup "kernel" members of
    Just (Str n) -> return n
    _ -> badInput "bad request: \"kernel\" must be a string"
  (params, _) <- maybe (badInput ("unknown kernel " ++ show name)) return (lookup name kernels)
  given <- case lookup "params" members of
    Nothing -> return []
    Just (Object ms) -> return ms
    Just _ -> badInput "bad request: \"params\" must be an object"
  forM_ (map fst given) $ \key ->
    unless (key `elem` [n | Param n _ _ _ <- params]) $
      badInput ("unknown param " ++ show key ++ " for kernel " ++ name)
  values <- forM params $ \(Param n def low high) -> do
    v <- case lookup n given of
      Nothing -> return def
      Just (Number text) | all (`elem` "-0123456789") text -> return (read text)
      Just _ -> badInput ("param " ++ n ++ " must be an integer")
    when (v < low || v > high) $
      badInput ("param " ++ n ++ "=" ++ show v ++ " out of range [" ++ show low ++ ", " ++ show high ++ "]")
    return (n, fromInteger v)
  case lookup "messages" values of
    Just m | odd m -> badInput ("param messages=" ++ show m ++ " must be even")
    _ -> return ()
  return (name, values)

-- The process's resident set in KiB (VmRSS in /proc/self/status).
residentKb :: IO Int
residentKb = do
  status <- readFile "/proc/self/status"
  case [read (head (words rest)) | line <- lines status, Just rest <- [stripPrefix "VmRSS:" line]] of
    kb : _ -> return kb
    [] -> badInput "/proc/self/status has no VmRSS"

main :: IO ()
main = do
  hSetBinaryMode stdin False
  input <- getContents
  when (all isSpace input) $ badInput "empty request on stdin"
  (name, values) <- parse input
  -- The scheduler's threads: +RTS -N as the request says (the RTS starts with one).
  setNumCapabilities (maybe 1 id (lookup "threads" values))
  -- Tests only: make the run's answer wrong, to see that the program refuses it.
  fault <- lookupEnv "LABCTL_GHC_PEER_FAULT"
  run <- maybe (badInput ("unknown kernel " ++ show name)) (return . snd) (lookup name kernels)
  -- main is a bound thread (an OS thread of its own): a kernel run there would hand each
  -- message to and from the forkIO threads across OS threads. Unbound, it is one of them.
  rssBefore <- residentKb
  reply <- runInUnboundThread (run (map snd values) fault)
  putStrLn (renderReply reply rssBefore)
  hFlush stdout
