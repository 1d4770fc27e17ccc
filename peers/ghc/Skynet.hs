{-# LANGUAGE BangPatterns #-}
-- skynet: a tree of forkIO threads over leaves [0, leaves), each node having min(branching,
-- count) children, as the skynet benchmark's Haskell entry: a node forks its children, each with
-- an MVar of its own, and takes their totals (sum, agents) one by one; a leaf puts its ordinal.
-- Measures forking the whole tree and gathering its totals at the root.
module Skynet (skynet) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar (MVar, newEmptyMVar, putMVar, takeMVar)
import Control.Monad (when)
import qualified Data.Map.Strict as Map
import GHC.Clock (getMonotonicTimeNSec)

import Protocol

-- What a node puts in its parent's MVar: its leaves' sum and its agents, strict and unboxed.
data Subtotal = Subtotal {-# UNPACK #-} !Int {-# UNPACK #-} !Int

-- The node covering `count` leaves from `first`: into min(branching, count) children of
-- near-equal size, the first count `rem` children one larger (our kernel's split).
node :: Int -> Int -> Int -> MVar Subtotal -> IO ()
node !first !count !branching out
  | count == 1 = putMVar out (Subtotal first 1)
  | otherwise = do
      let children = min branching count
          (base, extra) = count `quotRem` children
          spawn !i !start
            | i == children = return []
            | otherwise = do
                let n = if i < extra then base + 1 else base
                box <- newEmptyMVar
                _ <- forkIO (node start n branching box)
                rest <- spawn (i + 1) (start + n)
                return (box : rest)
          gather [] !total !agents = putMVar out (Subtotal total (agents + 1))
          gather (box : boxes) !total !agents = do
            Subtotal s a <- takeMVar box
            gather boxes (total + s) (agents + a)
      boxes <- spawn 0 first
      gather boxes 0 0

-- Agents in the tree over `leaves` leaves (memoised: a level has at most two subtree sizes).
treeAgents :: Int -> Int -> Int
treeAgents leaves branching = fst (go leaves Map.empty)
  where
    go 1 memo = (1, memo)
    go count memo = case Map.lookup count memo of
      Just agents -> (agents, memo)
      Nothing ->
        let children = min branching count
            (base, extra) = count `quotRem` children
            sizes = replicate extra (base + 1) ++ replicate (children - extra) base
            step (acc, m) size = let (a, m') = go size m in (acc + a, m')
            (agents, memo') = foldl step (1, memo) sizes
         in (agents, Map.insert count agents memo')

describe :: Int -> Int -> String
describe total agents = "sum=" ++ show total ++ " agents=" ++ show agents

skynet :: Int -> Int -> Maybe String -> IO Reply
skynet leaves branching fault = do
  root <- newEmptyMVar
  start <- getMonotonicTimeNSec
  _ <- forkIO (node 0 leaves branching root)
  Subtotal total agents <- takeMVar root
  end <- getMonotonicTimeNSec
  let elapsed = max 1 (fromIntegral (end - start)) :: Int
      -- Tests only: a sum one off, which the check below must refuse.
      total' = if fault == Just "wrong_answer" then total + 1 else total
      got = describe total' agents
      expected = describe (leaves * (leaves - 1) `div` 2) (treeAgents leaves branching)
  when (got /= expected) $ wrongAnswer "skynet" got expected
  return Reply
    { elapsedNs = elapsed
    , messages = agents - 1 -- every agent but the root reports once
    , answer = got
    , metrics = [("agents", fromIntegral agents), ("ns_per_agent", fromIntegral elapsed / fromIntegral agents)]
    , agentsCreated = Just agents
    }
